import { type Pending, turnCoalescer } from './coalescer.js';

/** A decision as the stores queue it: a name, and how it failed. */
interface Item extends Pending {
  readonly name: string;
}

const item = (name: string, failures: string[] = []): Item => ({ name, reject: (error) => failures.push(`${name}: ${(error as Error).message}`) });
const checkPhase = () => new Promise((resolve) => setImmediate(resolve));

describe('turnCoalescer: the batch window is one iteration of the event loop (batchesInFlight 0: one batch per iteration)', () => {
  it('the first decision goes at once; the ones asked after it wait for the check phase, then go as one batch', async () => {
    const sent: string[][] = [];
    const turns = turnCoalescer<Item>({ maxBatchSize: 64, batchesInFlight: 0, send: (batch) => void sent.push(batch.map((i) => i.name)) });
    expect(turns.first()).toBe(true);
    for (const name of ['b', 'c', 'd']) {
      expect(turns.first()).toBe(false);
      turns.add(item(name));
    }
    await Promise.resolve();
    await new Promise<void>((resolve) => process.nextTick(resolve));
    expect(sent).toEqual([]); // not at a tick: at the check phase
    await checkPhase();
    expect(sent).toEqual([['b', 'c', 'd']]);
  });

  it('under load, the first decision waits with the others (one batch per iteration) until an iteration asks one decision alone', async () => {
    const sent: string[][] = [];
    const turns = turnCoalescer<Item>({ maxBatchSize: 64, batchesInFlight: 0, send: (batch) => void sent.push(batch.map((i) => i.name)) });
    // An iteration of one decision: the next first goes at once too.
    expect(turns.first()).toBe(true);
    await checkPhase();
    expect(turns.first()).toBe(true);
    turns.add(item('b'));
    await checkPhase();
    // Decisions joined the first: the next iteration's first waits for the check phase with the rest.
    expect(turns.first()).toBe(false);
    turns.add(item('c'));
    turns.add(item('d'));
    await checkPhase();
    expect(sent).toEqual([['b'], ['c', 'd']]);
    // An iteration of one decision (held, then sent alone) opens again.
    expect(turns.first()).toBe(false);
    turns.add(item('e'));
    await checkPhase();
    expect(sent).toEqual([['b'], ['c', 'd'], ['e']]);
    expect(turns.first()).toBe(true);
  });

  it('a group that reaches maxBatchSize is sent at once; the rest of the iteration waits for the check phase', async () => {
    const sent: string[][] = [];
    const turns = turnCoalescer<Item>({ maxBatchSize: 2, batchesInFlight: 0, send: (batch) => void sent.push(batch.map((i) => i.name)) });
    turns.first();
    for (const name of ['b', 'c', 'd']) turns.add(item(name));
    expect(sent).toEqual([['b', 'c']]);
    await checkPhase();
    expect(sent).toEqual([['b', 'c'], ['d']]);
  });

  it('groups: one batch per group, each in the order asked, each flushed early on its own', async () => {
    const sent: string[][] = [];
    const turns = turnCoalescer<Item>({ maxBatchSize: 3, batchesInFlight: 0, send: (batch) => void sent.push(batch.map((i) => i.name)), groupOf: (i) => i.name[0] });
    turns.first();
    for (const name of ['x1', 'y1', 'x2', 'y2', 'x3', 'y3', 'x4']) turns.add(item(name));
    expect(sent).toEqual([
      ['x1', 'x2', 'x3'],
      ['y1', 'y2', 'y3'],
    ]);
    await checkPhase();
    expect(sent).toEqual([['x1', 'x2', 'x3'], ['y1', 'y2', 'y3'], ['x4']]);
  });

  it('a send that throws rejects each decision of its batch with the error, and the next batches still go', async () => {
    const failures: string[] = [];
    const sent: string[][] = [];
    const turns = turnCoalescer<Item>({
      maxBatchSize: 64,
      batchesInFlight: 0,
      send: (batch) => {
        if (batch[0]!.name === 'x') throw new Error('closed');
        sent.push(batch.map((i) => i.name));
      },
      groupOf: (i) => i.name,
    });
    turns.first();
    turns.add(item('x', failures));
    turns.add(item('x', failures));
    turns.add(item('y', failures));
    await checkPhase();
    expect(failures).toEqual(['x: closed', 'x: closed']);
    expect(sent).toEqual([['y']]);
  });

  it('flush() sends what waits at once (dispose), and onTurnEnd runs after the check phase', async () => {
    const events: string[] = [];
    const turns = turnCoalescer<Item>({
      maxBatchSize: 64,
      batchesInFlight: 0,
      send: (batch) => void events.push(`send ${batch.map((i) => i.name).join(',')}`),
      onTurnEnd: () => events.push('end'),
    });
    turns.first();
    turns.add(item('b'));
    turns.flush();
    expect(events).toEqual(['send b']);
    await checkPhase();
    expect(events).toEqual(['send b', 'end']);
  });
});

describe('turnCoalescer: a batch goes as soon as it holds its share of the decisions pending', () => {
  /** A send whose batches stay in flight until `settle(n)` ends the n-th one. */
  function inFlight() {
    const sent: string[][] = [];
    const ends: Array<() => void> = [];
    const send = (batch: Item[]) => {
      sent.push(batch.map((i) => i.name));
      return new Promise<void>((resolve) => ends.push(resolve));
    };
    return { sent, send, settle: async (n: number) => (ends[n]!(), await Promise.resolve()) };
  }

  it('batchesInFlight 4: a batch goes once it holds a quarter of the decisions pending (queued or in flight), the rest at the check phase', async () => {
    const { sent, send } = inFlight();
    const turns = turnCoalescer<Item>({ maxBatchSize: 64, batchesInFlight: 4, minEarlyBatchSize: 2, send });
    turns.first();
    // | asked | pending | batch | 4 × batch ≥ pending? |
    // |     2 |       2 |     2 | 8 ≥ 2: sent          |
    // |     4 |       4 |     2 | 8 ≥ 4: sent          |
    // |     … |         |       |                      |
    // |    10 |      10 |     2 | 8 < 10: waits        |
    // |    11 |      11 |     3 | 12 ≥ 11: sent        |
    // |    12 |      12 |     1 | held for the check phase |
    for (let i = 0; i < 12; i++) turns.add(item(`d${i}`));
    expect(sent.map((b) => b.length)).toEqual([2, 2, 2, 2, 3]);
    await checkPhase();
    expect(sent.map((b) => b.length)).toEqual([2, 2, 2, 2, 3, 1]);
    expect(sent.flat()).toEqual(Array.from({ length: 12 }, (_, i) => `d${i}`));
  });

  it('batches grow with the decisions pending, up to maxBatchSize', () => {
    const { sent, send } = inFlight();
    const turns = turnCoalescer<Item>({ maxBatchSize: 10, batchesInFlight: 4, minEarlyBatchSize: 2, send });
    turns.first();
    for (let i = 0; i < 60; i++) turns.add(item(`d${i}`));
    expect(sent.map((b) => b.length)).toEqual([2, 2, 2, 2, 3, 4, 5, 7, 9, 10, 10]);
  });

  it('decisions still in flight from an earlier iteration count: 40 in flight, the next batch holds 14 (4 × 14 ≥ 54)', async () => {
    const { sent, send } = inFlight();
    const shared = turnCoalescer<Item>({ maxBatchSize: 64, batchesInFlight: 4, minEarlyBatchSize: 2, send });
    shared.first();
    // 40 decisions sent in batches of 2 to 10 in the first iteration (none settles) …
    for (let i = 0; i < 40; i++) shared.add(item(`a${i}`));
    await checkPhase();
    const first = sent.length;
    // … then 20 asked in the next one: 40 + 14 pending when the 14th joins.
    shared.first();
    for (let i = 0; i < 20; i++) shared.add(item(`b${i}`));
    expect(sent.slice(first).map((b) => b.length)).toEqual([14]);
  });

  it('a settled batch no longer counts: the next batches are smaller again', async () => {
    const { sent, send, settle } = inFlight();
    const turns = turnCoalescer<Item>({ maxBatchSize: 64, batchesInFlight: 2, minEarlyBatchSize: 2, send });
    turns.first();
    for (let i = 0; i < 8; i++) turns.add(item(`a${i}`));
    await checkPhase();
    const before = sent.length;
    // Settle every batch so far: nothing is pending any more, so two decisions make a batch.
    for (let n = 0; n < before; n++) await settle(n);
    turns.first();
    turns.add(item('b0'));
    turns.add(item('b1'));
    expect(sent.slice(before)).toEqual([['b0', 'b1']]);
  });

  it('by default (2 in flight, early batches of at least 16), a light load keeps one batch per iteration; a heavy one splits in two', async () => {
    const { sent, send, settle } = inFlight();
    const turns = turnCoalescer<Item>({ maxBatchSize: 64, send });
    turns.first();
    // 12 asked: no early batch (12 < 16), one at the check phase.
    for (let i = 0; i < 12; i++) turns.add(item(`a${i}`));
    expect(sent).toEqual([]);
    await checkPhase();
    expect(sent.map((b) => b.length)).toEqual([12]);
    await settle(0);
    // 50 asked: 16 go at once (2 × 16 ≥ 16 pending), then 16 of 32 pending (the first 16 are
    // unanswered), and the last 18 at the check phase.
    turns.first();
    for (let i = 0; i < 50; i++) turns.add(item(`b${i}`));
    expect(sent.slice(1).map((b) => b.length)).toEqual([16, 16]);
    await checkPhase();
    expect(sent.slice(1).map((b) => b.length)).toEqual([16, 16, 18]);
  });

  it('a lone decision still waits for nothing, and never goes in a batch of one before the check phase', async () => {
    const { sent, send } = inFlight();
    const turns = turnCoalescer<Item>({ maxBatchSize: 64, send });
    expect(turns.first()).toBe(true);
    expect(turns.first()).toBe(false);
    turns.add(item('b'));
    expect(sent).toEqual([]);
    await checkPhase();
    expect(sent).toEqual([['b']]);
  });
});
