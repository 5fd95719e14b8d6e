// Test helpers (not exported by the package): a Nest app on Express or Fastify on a free loopback port.
import type { INestApplication, Type } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { AbstractHttpAdapter } from '@nestjs/core';
import { Test } from '@nestjs/testing';

/** Makes a fresh HTTP adapter for one app. */
export type Platform = () => AbstractHttpAdapter;

/** Express and Fastify, for `describe.each`. */
export const PLATFORMS: ReadonlyArray<readonly [name: string, platform: Platform]> = [
  ['Express', () => new ExpressAdapter()],
  ['Fastify', () => new FastifyAdapter()],
];

/** Starts `module` on the platform, listening on 127.0.0.1. */
export async function startApp(module: Type<unknown>, platform: Platform): Promise<{ app: INestApplication; url: string }> {
  const moduleRef = await Test.createTestingModule({ imports: [module] }).compile();
  const app = moduleRef.createNestApplication(platform(), { logger: false });
  await app.listen(0, '127.0.0.1');
  return { app, url: (await app.getUrl()).replace('[::1]', '127.0.0.1') };
}

/** GET `url`: the status, the headers (lower-case names) and the parsed JSON body. */
export async function get(url: string): Promise<{ status: number; headers: Record<string, string>; body: unknown }> {
  const response = await fetch(url);
  const text = await response.text();
  return { status: response.status, headers: Object.fromEntries(response.headers), body: text === '' ? undefined : (JSON.parse(text) as unknown) };
}
