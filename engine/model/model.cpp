#include "model/model.h"

namespace wb::model {

const vk::Profile& Model::profile() const {
    static const vk::Profile empty;
    return empty;
}

const HostTimes& Model::host_times() const {
    static const HostTimes empty;
    return empty;
}

}  // namespace wb::model
