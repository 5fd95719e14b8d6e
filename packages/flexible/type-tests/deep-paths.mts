// rate-limiter-flexible's deep paths, from ESM: the class is the default export, typed, and the root's class.
import RateLimiterMemory from '@ratekit/flexible/lib/RateLimiterMemory.js';
import RateLimiterStoreAbstract from '@ratekit/flexible/lib/RateLimiterStoreAbstract';
import RateLimiterQueueError from '@ratekit/flexible/lib/component/RateLimiterQueueError.js';
import { RateLimiterCluster } from '@ratekit/flexible/lib/RateLimiterCluster.js';
import * as flexible from '@ratekit/flexible';

const limiter: flexible.RateLimiterMemory = new RateLimiterMemory({ points: 1, duration: 1 });
const base: typeof flexible.RateLimiterStoreAbstract = RateLimiterStoreAbstract;
const queueError: Error = new RateLimiterQueueError('full');
const worker: flexible.RateLimiterCluster = new RateLimiterCluster({ points: 1, duration: 1 });
console.log(limiter.points, base.name, queueError.message, worker.keyPrefix);
// @ts-expect-error: points is required, as in rate-limiter-flexible
new RateLimiterMemory({ duration: 1 });
