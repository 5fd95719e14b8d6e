import { EventEmitter } from 'node:events';
import type { Request, Response } from 'express';
import { type SkipRequestsSettings, uncountWhenSkipped, watchResponse } from './skip-requests.js';

const req = {} as Request;

/** A response that only emits: `statusCode` and `writableEnded` are set by the test. */
function response(statusCode = 200): Response & EventEmitter {
  return Object.assign(new EventEmitter(), { statusCode, writableEnded: false }) as unknown as Response & EventEmitter;
}

function settings(skip: Partial<SkipRequestsSettings>): SkipRequestsSettings {
  return { skipFailedRequests: false, skipSuccessfulRequests: false, requestWasSuccessful: (_req, res) => res.statusCode < 400, ...skip };
}

/** Watches `res`, emits `events` (a `finish` ends the response first), and returns what was undone and reported once the work settled. */
async function run(res: Response & EventEmitter, skip: Partial<SkipRequestsSettings>, events: string[], undo: () => unknown = () => undefined) {
  const given = settings(skip);
  const watch = watchResponse(res, given)!;
  const undone: number[] = [];
  const reported: Array<[unknown, string]> = [];
  uncountWhenSkipped(req, res, watch, given, { undo: () => undone.push(1) && undo(), report: (error, during) => reported.push([error, during]) });
  for (const event of events) {
    if (event === 'finish') (res as unknown as { writableEnded: boolean }).writableEnded = true;
    res.emit(event, event === 'error' ? new Error('socket') : undefined);
  }
  await watch.settled();
  return { undone: undone.length, reported };
}

describe('watchResponse', () => {
  it('watches nothing when neither skip option is on', () => {
    expect(watchResponse(response(), settings({}))).toBeUndefined();
  });

  it('watches finish only for skipSuccessfulRequests, and close and error too for skipFailedRequests', () => {
    expect(watchResponse(response(), settings({ skipSuccessfulRequests: true }))).toMatchObject({ closed: undefined, errored: undefined });
    expect(watchResponse(response(), settings({ skipFailedRequests: true }))).toMatchObject({ closed: expect.any(Promise), errored: expect.any(Promise) });
  });
});

describe('uncountWhenSkipped', () => {
  it.each<[string, number, Partial<SkipRequestsSettings>, number, string[]]>([
    ['skipFailedRequests: a failed response', 1, { skipFailedRequests: true }, 500, ['finish']],
    ['skipFailedRequests: a successful response', 0, { skipFailedRequests: true }, 200, ['finish', 'close']],
    ['skipFailedRequests: closed before it ended', 1, { skipFailedRequests: true }, 200, ['close']],
    ['skipFailedRequests: an error, then close (once)', 1, { skipFailedRequests: true }, 200, ['error', 'close']],
    ['skipSuccessfulRequests: a successful response', 1, { skipSuccessfulRequests: true }, 200, ['finish']],
    ['skipSuccessfulRequests: a failed response', 0, { skipSuccessfulRequests: true }, 500, ['finish']],
    ['both: a failed response (once)', 1, { skipFailedRequests: true, skipSuccessfulRequests: true }, 500, ['finish', 'close']],
  ])('%s: taken back %i time(s)', async (_situation, times, skip, status, events) => {
    expect(await run(response(status), skip, events)).toEqual({ undone: times, reported: [] });
  });

  it('reports a failing undo as a decrement failure, a rejected one too', async () => {
    const error = new Error('store down');
    expect(
      (
        await run(response(500), { skipFailedRequests: true }, ['finish'], () => {
          throw error;
        })
      ).reported,
    ).toEqual([[error, 'decrement']]);
    expect((await run(response(500), { skipFailedRequests: true }, ['finish'], () => Promise.reject(error))).reported).toEqual([[error, 'decrement']]);
  });

  it('reports a throwing requestWasSuccessful as a callback failure, and takes nothing back', async () => {
    const error = new Error('bad callback');
    const requestWasSuccessful = () => {
      throw error;
    };
    expect(await run(response(), { skipSuccessfulRequests: true, requestWasSuccessful }, ['finish'])).toEqual({ undone: 0, reported: [[error, 'callback']] });
  });
});
