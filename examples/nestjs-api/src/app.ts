import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { AppModule, type AppOptions } from './app.module.js';

/** The HTTP platform Nest runs on. */
export type Platform = 'express' | 'fastify';

/**
 * Builds the app (not listening) on Express (default) or Fastify.
 * @param options `platform`; `store`: the ratekit store (default: a new in-memory store); `logger`: Nest's logger (default off)
 */
export async function createApp({ platform = 'express', logger = false, ...options }: AppOptions & { platform?: Platform; logger?: boolean } = {}): Promise<INestApplication> {
  const adapter = platform === 'fastify' ? new FastifyAdapter() : new ExpressAdapter();
  return NestFactory.create(AppModule.register(options), adapter, { logger: logger ? undefined : false });
}
