import type { Provider } from '@nestjs/common';
import { THROTTLER_OPTIONS } from './constants.js';
import type { ThrottlerModuleOptions } from './options.js';
import { ThrottlerStorage } from './storage.js';
import { ThrottlerStorageService } from './storage-service.js';

/** The options' provider of `forRoot`. */
export function createThrottlerProviders(options: ThrottlerModuleOptions): Provider[] {
  return [{ provide: THROTTLER_OPTIONS, useValue: options }];
}

/** The storage: the options' `storage`, else a bounded in-memory {@link ThrottlerStorageService}. */
export const ThrottlerStorageProvider: Provider = {
  provide: ThrottlerStorage,
  useFactory: (options: ThrottlerModuleOptions) => (!Array.isArray(options) && options.storage ? options.storage : new ThrottlerStorageService()),
  inject: [THROTTLER_OPTIONS],
};

/** The options' injection token, as @nestjs/throttler's `getOptionsToken()`. */
export const getOptionsToken = (): string => THROTTLER_OPTIONS;

/** The storage's injection token, as @nestjs/throttler's `getStorageToken()`. */
export const getStorageToken = (): typeof ThrottlerStorage => ThrottlerStorage;
