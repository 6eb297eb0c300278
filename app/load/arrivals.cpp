#include "load/arrivals.h"

#include <cmath>
#include <random>
#include <stdexcept>

namespace wb::load {

Arrival parse_arrival(const std::string& name) {
    if (name == "constant") return Arrival::Constant;
    if (name == "poisson") return Arrival::Poisson;
    if (name == "gamma") return Arrival::Gamma;
    throw std::invalid_argument("arrival '" + name + "': expected constant, poisson or gamma");
}

std::string to_string(Arrival a) {
    switch (a) {
        case Arrival::Constant:
            return "constant";
        case Arrival::Poisson:
            return "poisson";
        case Arrival::Gamma:
            return "gamma";
    }
    return "?";
}

std::vector<double> arrival_gaps(Arrival a, double rate, double burstiness, uint64_t seed,
                                 size_t n) {
    if (!std::isfinite(rate) || rate <= 0) {
        throw std::invalid_argument("arrival rate must be a finite number > 0 requests/s");
    }
    if (a == Arrival::Gamma && (!std::isfinite(burstiness) || burstiness <= 0)) {
        throw std::invalid_argument("burstiness (gamma shape) must be a finite number > 0");
    }
    std::vector<double> gaps(n);
    std::mt19937_64 rng(seed);
    switch (a) {
        case Arrival::Constant:
            for (double& g : gaps) g = 1.0 / rate;
            break;
        case Arrival::Poisson: {
            std::exponential_distribution<double> d(rate);
            for (double& g : gaps) g = d(rng);
            break;
        }
        case Arrival::Gamma: {
            std::gamma_distribution<double> d(burstiness, 1.0 / (rate * burstiness));
            for (double& g : gaps) g = d(rng);
            break;
        }
    }
    return gaps;
}

std::vector<double> arrival_schedule(Arrival a, double rate, double burstiness, uint64_t seed,
                                     size_t n) {
    std::vector<double> t(n, 0.0);
    if (n < 2) {
        (void)arrival_gaps(a, rate, burstiness, seed, 0);  // checks the arguments
        return t;
    }
    const std::vector<double> gaps = arrival_gaps(a, rate, burstiness, seed, n - 1);
    double sum = 0;
    for (const double g : gaps) sum += g;
    const double scale = sum > 0 ? (static_cast<double>(n - 1) / rate) / sum : 1.0;
    for (size_t i = 1; i < n; ++i) t[i] = t[i - 1] + gaps[i - 1] * scale;
    return t;
}

}  // namespace wb::load
