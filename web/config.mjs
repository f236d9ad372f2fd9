// @ts-check
// The viewer's constants, in one place (the page and the worker both import this module).

/** Messages per page: the first screen, each "Load older", the follow snapshot. Python's default is the same. */
export const PAGE_SIZE = 50;

/** A local file is parsed in slices of this many bytes, with a progress message after each. */
export const SLICE_BYTES = 4 << 20;

/** A local file bigger than this shows the part read first (its first PREVIEW_BYTES) while the rest is read, so
 * its first rows appear within a second however big it is; the whole file's tail page replaces them at the end. */
export const PREVIEW_FILE_BYTES = 8 << 20;
export const PREVIEW_BYTES = 1 << 20;

/** The wasm heap (Python's memory) a local file may grow to while it is read: past it the open stops with "too big
 * to open in the page". A 1.1 GB log of small events broke near 2.2 GB (garbage came back from
 * Python instead of an error), so the limit keeps well below that. */
export const FILE_HEAP_LIMIT = 1536 << 20;

/** Rows this close to the viewport (CSS margin) are rendered ahead of being on screen. */
export const NEAR_MARGIN = "1200px 0px";

/** The first screen renders the rows within this many pixels of the viewport. */
export const FIRST_SCREEN_MARGIN_PX = 200;

/** Scrolling within this many pixels of the top loads older messages by itself. */
export const LOAD_OLDER_NEAR_TOP_PX = 400;

/** A scroll this soon after the reader's own input (wheel, touch, keys, pointer) counts as the reader's. */
export const USER_SCROLL_MS = 1000;

/** The URL (#session=ID&seq=N) follows the row in view at most this often. */
export const URL_FOLLOW_MS = 150;

/** A session that sends no snapshot within this time stops showing the progress bar (the alert stays). */
export const OPEN_TIMEOUT_MS = 15000;

/** Reconnect backoff of a follow stream that ended (doubling between the two while the server does not answer). */
export const RETRY_MIN_MS = 1000;
export const RETRY_MAX_MS = 15000;

/** An open follow stream silent this long is dropped and reconnected (the server's keep-alive comes every 15 s). */
export const STALL_MS = 40000;

/** How many "Load older" steps a deep link (#seq=N) may take to reach its row. */
export const SEQ_SEARCH_PAGES = 50;

/** The boot stages the worker reports, in order (stage names match the worker's messages). */
export const BOOT_STAGES = /** @type {const} */ (["runtime", "packages", "ready"]);

/** Test hooks (runPython, state, view) exist only when the page is opened with ?test=1 (the worker gets the flag
 * through its own URL). */
export const TEST_MODE = new URLSearchParams(self.location.search).get("test") === "1";
