#pragma once
// Open-loop arrival schedules: when each request of a load-test step is sent,
// independent of when earlier requests finish (vLLM `bench serve`'s
// --request-rate / --burstiness, GuideLLM's "constant" and "poisson").
//   constant  every gap 1/R
//   poisson   gaps exponential with mean 1/R (coefficient of variation 1)
//   gamma     gaps gamma with shape B and scale 1/(R*B): mean 1/R,
//             coefficient of variation 1/sqrt(B) (B < 1 burstier than
//             Poisson, B > 1 more even, B = 1 is Poisson)

#include <cstdint>
#include <string>
#include <vector>

namespace wb::load {

/// The arrival process of an open-loop step (see the definitions above).
enum class Arrival { Constant, Poisson, Gamma };

/// "constant" | "poisson" | "gamma"; throws std::invalid_argument otherwise.
Arrival parse_arrival(const std::string& name);
/// "constant" | "poisson" | "gamma".
std::string to_string(Arrival a);

/// `n` raw gaps (seconds) of the process with rate `rate` (requests/s, > 0)
/// and `burstiness` (gamma shape, > 0; ignored for constant and poisson),
/// drawn from a std::mt19937_64 seeded with `seed`. Throws
/// std::invalid_argument for a rate or burstiness that is not finite and > 0.
std::vector<double> arrival_gaps(Arrival a, double rate, double burstiness, uint64_t seed,
                                 size_t n);

/// Send times (seconds from the step's start) of `n` requests: the first at
/// 0, then the gaps of arrival_gaps(), rescaled so the n - 1 gaps average
/// exactly 1/rate. The step then offers exactly `rate` however the random
/// sample fell, and the rescale leaves the gaps' coefficient of variation
/// (the burstiness) unchanged. Throws as arrival_gaps().
std::vector<double> arrival_schedule(Arrival a, double rate, double burstiness, uint64_t seed,
                                     size_t n);

}  // namespace wb::load
