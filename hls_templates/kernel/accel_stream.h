// accel_stream.h -- static (not rendered). The FIFOs between the kernel's top functions, and the error wire.
//
// Synthesis (ACCEL_SYNTH, defined whenever __SYNTHESIS__ is): fifo<T> is hls::stream<T>; every stream is an
// AXI4-Stream port of a top function, the FIFO itself (with the depth the ISA states) sits in the block design.
// The kernel accesses them with blocking read() / write() only (UG1399 supports no non-blocking access, full(),
// empty() on axis ports), so the C-simulation class below has nothing else for the kernel.
//
// C-simulation: fifo<T> is a bounded blocking FIFO of a stated capacity, safe across std::threads. All FIFOs share
// one scheduler (one mutex, one condition variable) that knows which module thread waits on which FIFO, so a
// deadlock is detected exactly: when the last running module thread is about to wait and no waiting thread's FIFO
// can satisfy it (a reader on an empty FIFO, a writer on a full one), nothing can ever move again. Every waiting
// thread then leaves its module by throwing csim::stop (the watchdog of the RTL, WATCHDOG status); csim::stop is
// also how the free-running modules are stopped at the end of a run (csim::quit()).
#ifndef ACCEL_STREAM_H
#define ACCEL_STREAM_H

#if defined(__SYNTHESIS__) && !defined(ACCEL_SYNTH)
#define ACCEL_SYNTH 1
#endif

#ifdef ACCEL_SYNTH
#include <hls_stream.h>
template <class T>
using fifo = hls::stream<T>;

// error wire: each free-running module drives its sticky error bits (ap_none output) and reads the OR of all of
// them (ap_none input, wired in the block design), so that no instruction starts after an error anywhere
typedef ap_uint<32> err_in_t;
typedef ap_uint<32> &err_out_t;
static inline unsigned err_peek(err_in_t w) { return (unsigned)w; }
static inline void err_publish(err_out_t w, ap_uint<32> bits) { w = bits; }
static inline void err_clear(err_out_t w) { w = 0; }
#else
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>

namespace csim {
struct stop {};  // thrown out of a blocking FIFO access: end of the run or deadlock

struct fifo_base {
    size_t n = 0, cap = 1;
};

struct sched {
    std::mutex m;
    std::condition_variable cv;
    int threads = 0;  // module threads registered for this run
    static const int MAX_THREADS = 8;
    const fifo_base *waits_on[MAX_THREADS] = {};
    bool wants_read[MAX_THREADS] = {};
    bool quit = false, dead = false;
    static sched &get() {
        static sched s;
        return s;
    }
    static int &self() {
        static thread_local int id = -1;
        return id;
    }
    bool blocked(int k) const {
        const fifo_base *f = waits_on[k];
        return f && (wants_read[k] ? f->n == 0 : f->n >= f->cap);
    }
    // called with m held by thread `me` about to wait on f: is every registered thread now stuck for good?
    bool deadlocked() const {
        for (int k = 0; k < threads; k++)
            if (!blocked(k)) return false;
        return threads > 0;
    }
    void wait(std::unique_lock<std::mutex> &lk, const fifo_base *f, bool rd) {
        const int me = self();
        if (me < 0) throw stop();  // not a module thread (cannot happen in the harness)
        waits_on[me] = f;
        wants_read[me] = rd;
        while (rd ? f->n == 0 : f->n >= f->cap) {
            if (quit || dead) {
                waits_on[me] = nullptr;
                throw stop();
            }
            if (deadlocked()) {
                dead = true;
                waits_on[me] = nullptr;
                cv.notify_all();
                throw stop();
            }
            cv.wait(lk);
        }
        waits_on[me] = nullptr;
    }
};

// a new run: `threads` module threads will register (ids 0 .. threads-1)
static inline void reset(int threads) {
    sched &s = sched::get();
    std::lock_guard<std::mutex> lk(s.m);
    s.threads = threads;
    s.quit = s.dead = false;
    for (int k = 0; k < sched::MAX_THREADS; k++) s.waits_on[k] = nullptr;
}
static inline void register_thread(int id) { sched::self() = id; }
static inline void quit() {
    sched &s = sched::get();
    std::lock_guard<std::mutex> lk(s.m);
    s.quit = true;
    s.cv.notify_all();
}
static inline bool deadlock() {
    sched &s = sched::get();
    std::lock_guard<std::mutex> lk(s.m);
    return s.dead;
}
}  // namespace csim

template <class T>
class fifo : public csim::fifo_base {
    std::deque<T> q;

  public:
    explicit fifo(size_t depth = 2) { cap = depth; }
    fifo(const fifo &) = delete;
    fifo &operator=(const fifo &) = delete;
    void write(const T &v) {
        csim::sched &s = csim::sched::get();
        std::unique_lock<std::mutex> lk(s.m);
        s.wait(lk, this, false);
        q.push_back(v);
        n = q.size();
        s.cv.notify_all();
    }
    T read() {
        csim::sched &s = csim::sched::get();
        std::unique_lock<std::mutex> lk(s.m);
        s.wait(lk, this, true);
        T v = q.front();
        q.pop_front();
        n = q.size();
        s.cv.notify_all();
        return v;
    }
    // C-simulation harness only (accel_csim.h: TOKENS_LEFT after a run): the entries the FIFO holds. The kernel
    // accesses its streams with blocking read() / write() only (AXI4-Stream ports), never their fill level.
    size_t harness_count() {
        std::lock_guard<std::mutex> lk(csim::sched::get().m);
        return n;
    }
};

// the error wire of C-simulation: one word all modules OR their error bits into and read
struct err_wire {
    std::atomic<unsigned> v{0};
};
typedef err_wire &err_in_t;
typedef err_wire &err_out_t;
static inline unsigned err_peek(err_in_t w) { return w.v.load(); }
static inline void err_publish(err_out_t w, ap_uint<32> bits) { w.v.fetch_or((unsigned)bits); }
static inline void err_clear(err_out_t) {}  // a fresh wire per run
#endif

#endif
