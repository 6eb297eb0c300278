#include "exec/vk/hazards.h"

#include <algorithm>

namespace wb::vk {

namespace {

bool contains(const std::vector<HazardTracker::Id>& v, HazardTracker::Id id) {
    return std::find(v.begin(), v.end(), id) != v.end();
}

void insert(std::vector<HazardTracker::Id>& v, HazardTracker::Id id) {
    if (!contains(v, id)) v.push_back(id);
}

}  // namespace

bool HazardTracker::conflicts(const std::vector<Id>& reads, const std::vector<Id>& writes) const {
    for (Id r : reads)
        if (contains(writes_, r)) return true;  // read after write
    for (Id w : writes)
        if (contains(writes_, w) || contains(reads_, w)) return true;  // write after write / read
    return false;
}

void HazardTracker::add(const std::vector<Id>& reads, const std::vector<Id>& writes) {
    for (Id r : reads) insert(reads_, r);
    for (Id w : writes) insert(writes_, w);
}

void HazardTracker::barrier() {
    reads_.clear();
    writes_.clear();
}

}  // namespace wb::vk
