/**
 * RateLimiterQueue: waits for tokens instead of refusing, as rlf 11.4's
 * `lib/RateLimiterQueue.js`. `removeTokens(tokens, key)` consumes from the
 * wrapped limiter; when the limiter refuses, the request waits in a FIFO
 * queue of that key, and one timer per key wakes the queue when the refusal's
 * `msBeforeNext` has passed, then serves the waiting requests in order until
 * the limiter refuses again.
 *
 * It never admits more than the limiter does: every request it resolves was
 * admitted by one `consume` of the wrapped limiter. A store failure (an
 * Error) rejects only the request it answered; the queue goes on with the
 * next one.
 *
 * Where rlf 11.4 differs from 11.1, this follows 11.4: the default queue and
 * the default key are both `'limiter'` (11.1 kept the default queue under the
 * literal property `KEY_DEFAULT`), `getTokensRemaining` reads the limiter for
 * every key and answers the full `points` when the store cannot be read, and
 * `removeTokens` takes an optional deadline (`expiresUnixAt`, Unix seconds).
 *
 * One stricter order than rlf's: while the head of a queue is being retried,
 * a new request waits behind it (rlf consumes it at once when the queue looks
 * empty, so it can overtake the head). It never admits more, only in order.
 *
 * @module
 */
import type { BurstyRateLimiter } from './bursty.js';
import type { IRateLimiterQueueOpts, RateLimiterLike } from './options.js';
import { RateLimiterQueueError } from './queue-error.js';
import type { RateLimiterRes } from './rate-limiter-res.js';

/** rlf's default `maxQueueSize`: 2^32 − 1 waiting requests per key. */
export const MAX_QUEUE_SIZE = 4294967295;

/** The longest delay Node's timers take (2^31 − 1 ms, about 24.8 days); the queue retries a longer wait after it. */
const MAX_TIMER_MS = 2_147_483_647;

/** The key of `removeTokens(tokens)` and `getTokensRemaining()` without a key. */
export const KEY_DEFAULT = 'limiter';

/** What the queue calls on the limiter it wraps. */
interface QueuedLimiter {
  readonly points?: number;
  consume(key: string | number, points: number): Promise<RateLimiterRes>;
  get(key: string | number): Promise<RateLimiterRes | null>;
}

/** A request waiting for its tokens. */
interface Waiting {
  readonly tokens: number;
  /** Unix seconds after which it is rejected instead of served; 0 = never. */
  readonly expiresUnixAt: number;
  readonly resolve: (remainingPoints: number) => void;
  readonly reject: (reason: unknown) => void;
}

/**
 * A FIFO queue over a limiter: `removeTokens` resolves with the remaining
 * points once the limiter admits the request, waiting as long as it takes.
 *
 * - `opts.maxQueueSize`: requests waiting per key at most (default 4294967295);
 *   one more rejects with {@link RateLimiterQueueError}
 *   "Number of requests reached it's maximum N".
 *
 * @example
 * ```ts
 * const limiter = new RateLimiterMemory({ points: 2, duration: 1 });
 * const queue = new RateLimiterQueue(limiter, { maxQueueSize: 100 });
 * const remaining = await queue.removeTokens(1); // waits when 2 tokens were taken this second
 * ```
 */
export class RateLimiterQueue {
  readonly _limiterFlexible: QueuedLimiter;
  readonly _maxQueueSize: number;
  readonly _queueLimiters = new Map<string, KeyQueue>();

  constructor(limiterFlexible: RateLimiterLike | BurstyRateLimiter, opts: IRateLimiterQueueOpts = {}) {
    this._limiterFlexible = limiterFlexible;
    this._maxQueueSize = opts.maxQueueSize !== undefined ? opts.maxQueueSize : MAX_QUEUE_SIZE;
    this._queueLimiters.set(KEY_DEFAULT, new KeyQueue(this._limiterFlexible, KEY_DEFAULT, this._maxQueueSize));
  }

  /**
   * The points the limiter has left for `key` (default `'limiter'`): its
   * `remainingPoints`, or its full `points` when it holds no record for the
   * key or cannot be read (rlf 11.4).
   */
  getTokensRemaining(key: string | number = KEY_DEFAULT): Promise<number> {
    return tokensRemaining(this._limiterFlexible, key);
  }

  /**
   * Takes `tokens` from the limiter for `key` (default `'limiter'`), waiting
   * in that key's queue while the limiter refuses. Resolves with the
   * limiter's `remainingPoints` after the take.
   *
   * Rejects with a {@link RateLimiterQueueError} when `tokens` exceeds the
   * limiter's `points` ("Requested tokens N exceeds maximum M tokens per
   * interval"), when the key's queue is full, or when `expiresUnixAt` (Unix
   * seconds; 0, the default, never expires) has come while the request
   * waited ("The request to remove tokens expired before it could be
   * fulfilled"); with the limiter's Error when its store fails.
   */
  removeTokens(tokens: number, key: string | number = KEY_DEFAULT, expiresUnixAt = 0): Promise<number> {
    const name = String(key);
    let queue = this._queueLimiters.get(name);
    if (queue === undefined) {
      queue = new KeyQueue(this._limiterFlexible, key, this._maxQueueSize);
      this._queueLimiters.set(name, queue);
    }
    return queue.removeTokens(tokens, expiresUnixAt);
  }
}

/** One key's FIFO queue and its timer. */
class KeyQueue {
  private readonly waiting: Waiting[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** True while the head of the queue is being consumed (out of `waiting`). */
  private serving = false;
  /** Set once a request with a deadline has waited; until then no sweep runs (rlf 11.4). */
  private hasDeadlines = false;

  constructor(
    private readonly limiter: QueuedLimiter,
    private readonly key: string | number,
    private readonly maxQueueSize: number,
  ) {}

  removeTokens(tokens: number, expiresUnixAt: number): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      const points = this.limiter.points;
      // rlf compares with the limiter's points as they are now; a limiter without `points` never fails this check.
      if (points !== undefined && tokens > points) {
        reject(new RateLimiterQueueError(`Requested tokens ${tokens} exceeds maximum ${points} tokens per interval`));
        return;
      }
      const request: Waiting = { tokens, expiresUnixAt, resolve, reject };
      if (this.waiting.length > 0 || this.serving) {
        this.enqueue(request);
        return;
      }
      consumeSafely(this.limiter, this.key, tokens).then(
        (res) => resolve(res.remainingPoints),
        (rejection: unknown) => {
          if (rejection instanceof Error) {
            reject(rejection);
            return;
          }
          this.enqueue(request);
          this.wakeAfter(rejection);
        },
      );
    });
  }

  private enqueue(request: Waiting): void {
    // Written as rlf compares: a maxQueueSize that is not a number (NaN) queues nothing.
    if (!(this.waiting.length < this.maxQueueSize)) {
      request.reject(new RateLimiterQueueError(`Number of requests reached it's maximum ${this.maxQueueSize}`));
      return;
    }
    this.waiting.push(request);
    if (request.expiresUnixAt > 0) this.hasDeadlines = true;
  }

  /** Starts the key's one timer, for the refusal's msBeforeNext, unless it runs already. */
  private wakeAfter(refusal: unknown): void {
    if (this.timer !== null) return;
    const msBeforeNext = (refusal as Partial<RateLimiterRes> | null)?.msBeforeNext;
    // Node fires a longer timer after 1 ms (TimeoutOverflowWarning): a key blocked for weeks would be retried in a loop.
    this.timer = setTimeout(() => this.serveNext(), msBeforeNext === undefined ? undefined : Math.min(msBeforeNext, MAX_TIMER_MS));
  }

  /** Serves the head of the queue, and the next ones while the limiter admits them. */
  private serveNext(): void {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    // The head in flight continues the loop when it settles (serveNext again, or a new timer).
    if (this.serving) return;
    if (this.hasDeadlines) this.rejectExpired(Math.floor(Date.now() / 1000));
    const head = this.waiting.shift();
    if (head === undefined) return;
    this.serving = true;
    consumeSafely(this.limiter, this.key, head.tokens).then(
      (res) => {
        this.serving = false;
        head.resolve(res.remainingPoints);
        this.serveNext();
      },
      (rejection: unknown) => {
        this.serving = false;
        if (rejection instanceof Error) {
          head.reject(rejection);
          this.serveNext();
          return;
        }
        this.waiting.unshift(head);
        this.wakeAfter(rejection);
      },
    );
  }

  /** Rejects the waiting requests whose deadline (Unix seconds) has come. */
  private rejectExpired(nowUnixSeconds: number): void {
    let kept = 0;
    for (const request of this.waiting) {
      if (request.expiresUnixAt > 0 && nowUnixSeconds >= request.expiresUnixAt) {
        request.reject(new RateLimiterQueueError('The request to remove tokens expired before it could be fulfilled'));
      } else {
        this.waiting[kept++] = request;
      }
    }
    this.waiting.length = kept;
  }
}

/** The limiter's consume, a synchronous throw turned into a rejection (it would otherwise escape from a timer and crash the process). */
function consumeSafely(limiter: QueuedLimiter, key: string | number, tokens: number): Promise<RateLimiterRes> {
  try {
    return limiter.consume(key, tokens);
  } catch (err) {
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
}

/** The limiter's remaining points for `key`, or its full points when it has no record or cannot be read (rlf 11.4). */
function tokensRemaining(limiter: QueuedLimiter, key: string | number): Promise<number> {
  return limiter.get(key).then(
    (res) => (res !== null ? res.remainingPoints : (limiter.points as number)),
    () => limiter.points as number,
  );
}
