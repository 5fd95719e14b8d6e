import type { AlgorithmName } from '../limit.js';
import { delay } from './delay.js';
import { fixedWindow } from './fixed-window.js';
import { gcra } from './gcra.js';
import { slidingLog } from './sliding-log.js';
import { slidingWindow } from './sliding-window.js';
import { tokenBucket } from './token-bucket.js';
import type { Algorithm } from './types.js';

/** Every algorithm by name. Stores that evaluate in process look algorithms up here. */
export const algorithms: Readonly<Record<AlgorithmName, Algorithm>> = Object.freeze({
  'fixed-window': fixedWindow,
  'sliding-window': slidingWindow,
  'sliding-log': slidingLog,
  'token-bucket': tokenBucket,
  gcra,
  delay,
});

export type { Algorithm, LimitState, Step } from './types.js';
