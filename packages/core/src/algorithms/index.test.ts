import { ALGORITHMS } from '../limit';
import { algorithmOf, algorithms, stepOf } from './index';
import { limitOf } from '../test-support/algorithms';

// algorithmOf and stepOf are switches kept beside the `algorithms` table for speed: they must name the same algorithms.
describe('algorithmOf and stepOf', () => {
  it.each(ALGORITHMS)('%s: algorithmOf gives algorithms[name], and stepOf steps with it', (name) => {
    expect(algorithmOf(name)).toBe(algorithms[name]);
    const limit = limitOf({ algorithm: name, limit: 5, windowMs: 1_000 });
    const state = algorithms[name].step(undefined, limit, 2, 1_000).next;
    expect(stepOf(name, state, limit, 1, 1_400)).toEqual(algorithms[name].step(state, limit, 1, 1_400));
  });
});
