// Heavy work at a lower CPU priority than the event loop. A worker thread or engine process that
// parses a 10,000-page PDF or runs a segmentation model competes for the same cores as the
// thread that answers every other request; at the same priority the scheduler gives them equal
// shares, so each cheap request's own CPU work took two to four times as long while a heavy one
// ran (bench/stall: balance p99 during a split 3-5x its idle p99 on a loaded machine, with the
// event loop itself free). At nice 10 a busy background thread gets about a tenth of a core's
// share against a runnable nice-0 event loop, and all of an otherwise idle one: the heavy work
// loses nothing when the gateway has nothing else to do. On Linux the nice value is a thread's
// own (setpriority on the calling thread), and threads and processes it starts inherit it.

/** The nice value of worker threads and engine processes (0 is normal, 19 the lowest). */
export const BACKGROUND_NICE = 10;

/**
 * JavaScript that puts the thread it runs on at BACKGROUND_NICE, for the inline sources of worker
 * threads and engine processes (a platform that refuses it just leaves the priority as it is).
 */
export const LOWER_PRIORITY_SOURCE = `try { require('node:os').setPriority(${BACKGROUND_NICE}); } catch {}`;
