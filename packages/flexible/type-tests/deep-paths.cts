// rate-limiter-flexible's deep paths, from CommonJS: each is the class (`module.exports = <class>`), typed, and the root's class.
import RateLimiterMemory = require('@ratekit/flexible/lib/RateLimiterMemory');
import RateLimiterRes = require('@ratekit/flexible/lib/RateLimiterRes.js');
import RateLimiterQueueError = require('@ratekit/flexible/lib/component/RateLimiterQueueError');
import isRateLimiterCompatible = require('@ratekit/flexible/lib/helper/isRateLimiterCompatible.js');
import cluster = require('@ratekit/flexible/lib/RateLimiterCluster');
import flexible = require('@ratekit/flexible');

const limiter: flexible.RateLimiterMemory = new RateLimiterMemory({ points: 1, duration: 1 });
const res: flexible.RateLimiterRes = new RateLimiterRes(0, 1000, 2, false);
const queueError: Error = new RateLimiterQueueError('full');
const compatible: boolean = isRateLimiterCompatible(limiter);
const worker: flexible.RateLimiterCluster = new cluster.RateLimiterCluster({ points: 1, duration: 1 });
console.log(res.msBeforeNext, queueError.message, compatible, worker.keyPrefix);
// @ts-expect-error: points is required, as in rate-limiter-flexible
new RateLimiterMemory({ duration: 1 });
