// accel_maxi.h -- static (not rendered). The kernel's m_axi ports with explicit (manual) bursts.
//
// Synthesis (ACCEL_SYNTH): maxi<T> is hls::burst_maxi<T> (UG1399, "Using Manual Burst"): read_request(offset, len)
// queues a read burst of len T-words from word offset, read() returns its next word (blocking); write_request(offset,
// len) opens a write burst, write(val, byteenable) writes its next word with the byte strobes byteenable (bit j:
// byte j, i.e. bits 8j+7..8j of val; AXI WSTRB), write_response() waits for one request's write response. The
// m_axi adapter turns each request into AXI bursts as the port's INTERFACE pragma allows (max_read_burst_length /
// max_write_burst_length, num_*_outstanding). Every request must be read / written for exactly len words, and
// every write request answered by one write_response() (else the adapter deadlocks).
//
// C-simulation: a model of the same methods over a plain T* (the DDR image), with the rules above checked: a read
// or write without an open request, more words than requested, a write_response() without a fully written request,
// and requests left unfinished when the last copy of the port goes out of scope (the end of a top's invocation)
// print what went wrong and abort(): a kernel bug fails C-simulation loudly. Copies share one state (the kernel
// passes the port by value, as hls::burst_maxi is passed).
#ifndef ACCEL_MAXI_H
#define ACCEL_MAXI_H

#if defined(__SYNTHESIS__) && !defined(ACCEL_SYNTH)
#define ACCEL_SYNTH 1
#endif

#include <ap_int.h>
#include <cstddef>   // size_t: request offsets and lengths (T-words)

#ifdef ACCEL_SYNTH
#include <hls_burst_maxi.h>
template <class T>
using maxi = hls::burst_maxi<T>;
#else
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <memory>

template <class T>
class maxi {
    struct req_t {
        size_t off;     // first word
        size_t len;     // words requested
        size_t done;    // words read / written so far
    };
    struct state_t {
        T *p = nullptr;
        std::deque<req_t> rd;   // open read requests, oldest first
        std::deque<req_t> wr;   // write requests without their response, oldest first
        size_t wi = 0;          // wr[wi]: the request being written (wi == wr.size(): none open)
    };
    std::shared_ptr<state_t> s;

    [[noreturn]] static void fail(const char *what, size_t a = 0, size_t b = 0) {
        std::fprintf(stderr, "accel_maxi: kernel bug: %s (%zu, %zu)\n", what, a, b);
        std::fflush(stderr);
        std::abort();
    }

  public:
    // the port over the memory p (implicit, as hls::burst_maxi's: a top takes the testbench's pointer)
    maxi(T *p) : s(std::make_shared<state_t>()) { s->p = p; }
    maxi(const maxi &) = default;
    maxi &operator=(const maxi &) = default;
    ~maxi() {
        // the last copy: every request finished (not while a csim::stop unwinds a module thread mid-instruction)
        if (s.use_count() != 1 || std::uncaught_exception()) return;
        if (!s->rd.empty()) fail("read requests not fully read (requests, words of the oldest left)", s->rd.size(),
                                 s->rd.front().len - s->rd.front().done);
        if (s->wi != s->wr.size())
            fail("write requests not fully written (requests, words of the oldest left)", s->wr.size() - s->wi,
                 s->wr[s->wi].len - s->wr[s->wi].done);
        if (!s->wr.empty()) fail("write requests without their write_response() (requests)", s->wr.size());
    }

    void read_request(size_t offset, size_t len) {
        if (len == 0) return;   // (as hls::burst_maxi: no transfer)
        s->rd.push_back(req_t{offset, len, 0});
    }

    T read() {
        if (s->rd.empty()) fail("read() without an open read_request()");
        req_t &r = s->rd.front();
        const T v = s->p[r.off + r.done];
        if (++r.done == r.len) s->rd.pop_front();
        return v;
    }

    void write_request(size_t offset, size_t len) {
        s->wr.push_back(req_t{offset, len, 0});   // (len 0, as hls::burst_maxi: no transfer, a response to wait for)
        while (s->wi < s->wr.size() && s->wr[s->wi].done == s->wr[s->wi].len) s->wi++;
    }

    // the next word of the oldest open write request; only the bytes whose byteenable bit is set are written
    void write(const T &val, const ap_uint<T::width / 8> &byteenable = ~ap_uint<T::width / 8>(0)) {
        if (s->wi == s->wr.size())
            fail("write() without an open write_request() (strobes, requests awaiting a response)",
                 (size_t)byteenable.to_uint64(), s->wr.size());
        req_t &r = s->wr[s->wi];
        T &w = s->p[r.off + r.done];
        if (byteenable == ~ap_uint<T::width / 8>(0)) {
            w = val;
        } else {
            for (int j = 0; j < T::width / 8; j++)
                if (byteenable[j]) w.range(8 * j + 7, 8 * j) = val.range(8 * j + 7, 8 * j);
        }
        r.done++;
        while (s->wi < s->wr.size() && s->wr[s->wi].done == s->wr[s->wi].len) s->wi++;
    }

    // the response of the oldest write request, which must have been fully written (responses come in order)
    void write_response() {
        if (s->wr.empty() || s->wi == 0)
            fail("write_response() before its write_request() was fully written (requests, words written)",
                 s->wr.size(), s->wr.empty() ? 0 : s->wr.front().done);
        s->wr.pop_front();
        s->wi--;
    }
};
#endif

#endif
