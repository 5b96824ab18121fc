/*
 * link.h -- a framed byte stream, on the process's one libevent base: over
 * a pair of file descriptors, or over a stream that is not an fd (an ssh
 * channel: link_new_io). The agent speaks to its launcher over one
 * (stdin/stdout); the launcher to each agent over one, whatever the
 * backend that reached it (a socketpair, srun's TCP, an ssh channel).
 * Framing, queueing (before the stream is up too), pausing, limits and
 * heartbeats are the link's alone: the backend only moves bytes. Writes
 * are queued and never block; reading can be paused for back-pressure.
 */
#ifndef DT_LINK_H
#define DT_LINK_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct link;

/* One whole frame arrived. */
typedef void	(*link_frame_cb)(void *arg, uint8_t type, const uint8_t *payload,
		    size_t len);
/*
 * The stream ended (err 0 = clean EOF) or broke (a DT_ERR_* and a reason).
 * After DT_ERR_PROTO (the peer sent a bad frame) nothing more is read, but
 * what the owner sends still goes (say, why it stops) until link_free.
 */
typedef void	(*link_close_cb)(void *arg, int err, const char *why);
/* The output queue fell below the low-water mark after being above the high one. */
typedef void	(*link_drain_cb)(void *arg);
/* The peer was silent for the heartbeat timeout (link_heartbeat). */
typedef void	(*link_silent_cb)(void *arg);

struct link_cbs {
	link_frame_cb	 frame;
	link_close_cb	 close;
	link_drain_cb	 drain;		/* may be NULL */
	void		*arg;
};

/*
 * Makes a link reading frames (at most max_frame bytes each) from rfd and
 * writing to wfd (may be the same fd). Both are made non-blocking.
 * Returns NULL only if out of memory.
 */
struct link	*link_new(struct event_base *, int rfd, int wfd, size_t max_frame,
		    const struct link_cbs *);

/*
 * A stream that is not an fd. read and write move at most n bytes and
 * return how many, 0 (read: end of stream), or -1 with errno: EAGAIN when
 * nothing can move now (also while the stream is not up yet), anything
 * else when it broke. kick tells the owner the link wants to move bytes
 * (output queued, or reading resumed): the owner calls link_io_ready
 * soon, and whenever the stream can move. why (may be NULL) says why the
 * stream broke, for the close callback.
 */
struct link_io {
	ssize_t		 (*read)(void *arg, void *buf, size_t n);
	ssize_t		 (*write)(void *arg, const void *buf, size_t n);
	void		 (*kick)(void *arg);
	const char	*(*why)(void *arg);
	void		*arg;
};

/* The close callback's why when the stream ended inside a frame. */
#define LINK_TRUNCATED	"stream ended inside a frame"

/*
 * Makes a link whose fds come later (link_attach): what is sent meanwhile
 * waits in its queue, in order. NULL only if out of memory.
 */
struct link	*link_new_later(struct event_base *, size_t max_frame,
		    const struct link_cbs *);
/* Gives a link_new_later link its fds and writes what waited. 0, or DT_ERR_NOMEM. */
int		 link_attach(struct link *, int rfd, int wfd);
/*
 * Takes the fd (one for both ways) back from l and frees l without
 * closing it; safe inside l's callbacks. What l had read and not
 * delivered, or queued and not written, is dropped. Returns the fd.
 */
int		 link_take_fd(struct link *);

/* Makes a link over io; NULL only if out of memory. */
struct link	*link_new_io(struct event_base *, const struct link_io *,
		    size_t max_frame, const struct link_cbs *);
/*
 * The io stream may move: writes what is queued, reads and delivers what
 * came (writes first, so STOP never waits behind output), until neither
 * moves. May close the link (close callback) or free it (a callback did).
 */
void		 link_io_ready(struct link *);
/* Copies up to n of the bytes read and not yet delivered (a partial frame) into buf; returns how many. */
size_t		 link_peek(const struct link *, void *buf, size_t n);
/* True while reading is paused. */
int		 link_paused(const struct link *);

/* Queues bytes (whole frames) for writing; returns 0, or DT_ERR_CLOSED if the link is down. */
int		 link_send(struct link *, const void *, size_t);
/*
 * Sends a frame whose payload, n bytes, waits in the pipe fd, after its
 * header hdr: when nothing is queued before it, spliced from the pipe onto
 * the stream, so this process never copies the payload (what the stream
 * does not take at once is read into the queue). Returns 1 when sent or
 * queued; 0 when the link cannot (held, packing, a stream adapter, frames
 * queued before: the caller reads and link_sends as usual); or DT_ERR_*.
 */
int		 link_send_spliced(struct link *, const void *hdr, size_t hlen,
		    int fd, size_t n);
/*
 * Holds (on 1) what is sent from now on in the queue, unwritten; releasing
 * (on 0) has the event loop write all of it, once the caller returns to
 * it. For a burst of frames the peer should read at once (a HELLO's
 * answer): one write, one wake-up there.
 */
void		 link_hold(struct link *, int on);
/*
 * Packs (on 1) what is sent from now on: each link_send of at least
 * PACK_MIN bytes goes as one PACKED frame (pack.h) when that saves bytes,
 * so each must then hold whole frames only (the reader refuses a PACKED
 * frame that ends inside one). For a stream where every byte costs (ssh);
 * every link unpacks what it reads, whether or not it packs.
 */
void		 link_pack(struct link *, int on);
/*
 * What the link has read: bytes off the stream (*read), and bytes of the
 * frames it delivered, headers included (*frames): more than *read when
 * the peer packed.
 */
void		 link_counts(const struct link *, uint64_t *read,
		    uint64_t *frames);
/* Bytes queued and not yet written. */
size_t		 link_queued(const struct link *);
/* Stops (1) or resumes (0) reading, for back-pressure. */
void		 link_pause(struct link *, int);
/* Sets when drain_cb fires: after queued > high, once queued <= low. */
void		 link_watermarks(struct link *, size_t low, size_t high);
/*
 * Blocks until everything queued is written or the peer is gone, while
 * something moves either way at least every idle_ms milliseconds (-1: no
 * limit); what the peer sends meanwhile is read and dropped. Returns 0, or
 * -1 when it gave up after idle_ms of silence both ways.
 */
int		 link_flush(struct link *, int idle_ms);
/* True once the stream has closed or broken, or a bad frame came. */
int		 link_closed(const struct link *);

/*
 * Heartbeats catch a peer that goes silent without the stream breaking (a
 * host powered off, a partition that sends no reset). Once on, the link
 * looks every timeout_ms / (LINK_BEAT_LOOKS + 1) milliseconds (at least
 * 1): if it sent nothing since the last look and has nothing queued, it
 * sends beat (len bytes of whole frames, copied: the owner's protocol
 * decides what they say); if it heard nothing at LINK_BEAT_LOOKS looks in
 * a row, so within the timeout, it calls silent(arg) once and stops
 * looking; the owner decides what to do (silent may free the link). Any
 * byte read counts as life, and so do looks while reading is paused (what
 * the peer sends waits unread). Looks are counted, not clock time: a
 * process whose own loop stalled looks once when it wakes and gives
 * nobody up for its own sleep. Calling it again starts the count afresh;
 * timeout_ms 0 turns heartbeats off. The link sends nothing now: the owner
 * sends a first beat itself where its peer must hear of them at once.
 * Returns 0, or DT_ERR_NOMEM.
 */
#define LINK_BEAT_LOOKS	5
int		 link_heartbeat(struct link *, uint64_t timeout_ms,
		    const void *beat, size_t len, link_silent_cb silent,
		    void *arg);
/* The time between heartbeat looks for timeout_ms (at least 1 ms). */
uint64_t	 link_beat_period_ms(uint64_t timeout_ms);
/*
 * Looks once now, as the heartbeat timer does: sends the beat or reports
 * the peer silent. For tests, which count looks rather than wait for them.
 */
void		 link_heartbeat_look(struct link *);
struct dt_err;
struct evbuffer;
/*
 * Hands every whole frame at the front of in (at most max bytes each) to
 * cb, consuming it, while more(more_arg) is true. Each frame is drained
 * after cb returns, even if cb paused or closed the stream (more then turns
 * false and the loop stops): every frame is delivered exactly once. So in
 * and more_arg must outlive the call: an owner freed inside cb defers
 * freeing them. For streams that are not fds (an ssh channel). Returns 0,
 * or DT_ERR_PROTO or DT_ERR_TOOBIG with e (may be NULL) filled: the
 * stream is then unusable.
 */
int		 link_frames(struct evbuffer *in, size_t max, link_frame_cb cb,
		    void *arg, int (*more)(void *), void *more_arg,
		    struct dt_err *e);
/* Closes the fds and frees; safe to call from within the link's own callbacks. */
void		 link_free(struct link *);

#endif
