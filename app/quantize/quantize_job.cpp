#include "quantize/quantize_job.h"

#include "errors/errors.h"
#include "ggml/types.h"
#include "gguf/writer.h"

namespace wb::quantize {

namespace {

// Thrown out of quant::quantize_file's progress callback to stop it; the
// writer's destructor removes the partial file on the way out.
struct Stop {};

}  // namespace

std::string type_upper_name(uint32_t type) {
    return ggml::type_upper_name(type);
}

const char* to_string(ErrorKind kind) {
    switch (kind) {
        case ErrorKind::Request:
            return "request";
        case ErrorKind::InputFile:
            return "input file";
        case ErrorKind::InputFormat:
            return "input format";
        case ErrorKind::Unsupported:
            return "unsupported";
        case ErrorKind::Output:
            return "output";
        case ErrorKind::Cancelled:
            return "cancelled";
    }
    return "?";
}

quant::QuantizeReport QuantizeJob::run(const ProgressFn& progress) {
    const auto step = [this, &progress](size_t i, size_t n, const quant::TensorPlan& plan) {
        if (cancel_.load()) throw Stop{};
        if (!progress) return;
        Progress p;
        p.index = i;
        p.count = n;
        p.fraction = n ? static_cast<double>(i) / static_cast<double>(n) : 0.0;
        p.plan = plan;
        progress(p);
    };
    if (cancel_.load()) throw Error(ErrorKind::Cancelled, "quantize: cancelled; no file written");
    try {
        return quant::quantize_file(request_.input, request_.output, request_.target, step,
                                    request_.options);
    } catch (const Stop&) {
        throw Error(ErrorKind::Cancelled, "quantize: cancelled; no file written");
    } catch (const gguf::WriteError& e) {
        throw Error(ErrorKind::Output, e.what());
    } catch (const wb::Error& e) {
        switch (e.kind()) {
            case wb::ErrorKind::File:
                throw Error(ErrorKind::InputFile, e.what());
            case wb::ErrorKind::Unsupported:
                throw Error(ErrorKind::Unsupported, e.what());
            default:  // Format; Device and OutOfMemory do not arise without a device
                throw Error(ErrorKind::InputFormat, e.what());
        }
    } catch (const std::invalid_argument& e) {  // in and out name the same file
        throw Error(ErrorKind::Request, e.what());
    } catch (const std::runtime_error& e) {  // gguf::File::open: cannot read, not a regular file
        throw Error(ErrorKind::InputFile, e.what());
    } catch (const std::exception& e) {
        // bad_alloc, length_error, out_of_range: sizes read from a malformed
        // file that no reader check caught. Still one typed error, so every
        // caller's catch of Error sees it and nothing escapes a worker thread.
        throw Error(ErrorKind::InputFormat, request_.input + ": cannot quantize: " + e.what());
    }
}

}  // namespace wb::quantize
