import { type Pending, turnCoalescer } from './coalescer.js';

/** A decision as the stores queue it: a name, and how it failed. */
interface Item extends Pending {
  readonly name: string;
}

const item = (name: string, failures: string[] = []): Item => ({ name, reject: (error) => failures.push(`${name}: ${(error as Error).message}`) });
const checkPhase = () => new Promise((resolve) => setImmediate(resolve));

describe('turnCoalescer: the batch window is one iteration of the event loop', () => {
  it('the first decision goes at once; the ones asked after it wait for the check phase, then go as one batch', async () => {
    const sent: string[][] = [];
    const turns = turnCoalescer<Item>(64, (batch) => sent.push(batch.map((i) => i.name)));
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
    const turns = turnCoalescer<Item>(64, (batch) => sent.push(batch.map((i) => i.name)));
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
    const turns = turnCoalescer<Item>(2, (batch) => sent.push(batch.map((i) => i.name)));
    turns.first();
    for (const name of ['b', 'c', 'd']) turns.add(item(name));
    expect(sent).toEqual([['b', 'c']]);
    await checkPhase();
    expect(sent).toEqual([['b', 'c'], ['d']]);
  });

  it('groups: one batch per group, each in the order asked, each flushed early on its own', async () => {
    const sent: string[][] = [];
    const turns = turnCoalescer<Item>(
      3,
      (batch) => sent.push(batch.map((i) => i.name)),
      (i) => i.name[0],
    );
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
    const turns = turnCoalescer<Item>(
      64,
      (batch) => {
        if (batch[0]!.name === 'x') throw new Error('closed');
        sent.push(batch.map((i) => i.name));
      },
      (i) => i.name,
    );
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
    const turns = turnCoalescer<Item>(
      64,
      (batch) => events.push(`send ${batch.map((i) => i.name).join(',')}`),
      undefined,
      () => events.push('end'),
    );
    turns.first();
    turns.add(item('b'));
    turns.flush();
    expect(events).toEqual(['send b']);
    await checkPhase();
    expect(events).toEqual(['send b', 'end']);
  });
});
