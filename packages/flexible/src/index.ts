/**
 * @ratekit/flexible: a drop-in for rate-limiter-flexible 11 on ratekit.
 *
 * @module
 */
export {};
