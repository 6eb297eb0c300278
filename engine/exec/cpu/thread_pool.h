#pragma once
// A fixed set of worker threads that run one parallel loop at a time: the
// calling thread posts n tasks, works on them itself, and returns when all
// are done. Tasks are claimed one by one from a shared counter, so a thread
// slowed by other load on the machine takes fewer of them, and a worker
// that has not woken up by the time the tasks are gone is not waited for
// (on a busy machine a sleeping thread may take milliseconds to be
// scheduled). Idle workers spin briefly (a decode step posts a few hundred
// loops, microseconds apart), then sleep on a futex (std::atomic::wait).
//
// Models share one pool per thread count (ThreadPool::shared), as ggml's
// contexts can share a threadpool: two models in one process (Compare's
// panes, a speculative draft beside its target, a canary beside the stable
// version) would otherwise each keep a set of workers that spin while the
// other model runs, on the same cores.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace wb::cpu {

class ThreadPool {
  public:
    /// `n_threads` threads in all, the caller included (so n_threads - 1
    /// workers); 0 means std::thread::hardware_concurrency().
    explicit ThreadPool(unsigned n_threads);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    /// Threads that run tasks, the caller included (>= 1).
    unsigned size() const { return n_threads_; }

    /// Largest n_tasks run() takes.
    static constexpr uint32_t kMaxTasks = (1u << 20) - 1;

    using Fn = std::function<void(uint32_t task, unsigned thread)>;

    /// Runs fn(task, thread) for every task in [0, n_tasks), thread in [0,
    /// size()), spread over the threads; returns when all are done. Calls
    /// from several threads are serialized (one loop at a time); not
    /// reentrant (fn must not call run). n_tasks above kMaxTasks throws
    /// std::invalid_argument; an exception thrown by fn terminates.
    void run(uint32_t n_tasks, const Fn& fn);

    /// The process's pool of `n_threads` threads (0: hardware concurrency),
    /// created on first use and kept while any holder keeps it: every model
    /// asking for the same count gets the same workers.
    static std::shared_ptr<ThreadPool> shared(unsigned n_threads);

  private:
    void worker(unsigned index);
    /// Claims and runs tasks of the current loop until none is left.
    void work(unsigned thread);

    unsigned n_threads_;
    std::vector<std::thread> threads_;
    // The current loop: generation (24 bits) | n_tasks (20) | next task (20),
    // claimed by compare-and-swap so that a claim succeeds only while its
    // loop still has unclaimed tasks (so fn_ is that loop's).
    std::atomic<uint64_t> state_{0};
    std::atomic<const Fn*> fn_{nullptr};
    std::atomic<uint32_t> done_{0};  // tasks of the current loop finished
    std::atomic<uint32_t> wake_{0};  // bumped per loop; sleeping workers wait on it
    std::atomic<bool> stop_{false};
    std::mutex run_mutex_;  // one loop at a time when several threads share the pool
};

}  // namespace wb::cpu
