// `node --import <this file>` in a twin contender's process: registers lib/against-resolve.mjs for the ref
// worktree named by BENCH_AGAINST_ROOT (lib/against.mjs sets both). Worker processes a cluster primary forks
// inherit the flag and the variable.
import { register } from 'node:module';

const root = process.env.BENCH_AGAINST_ROOT;
if (!root) throw new Error('BENCH_AGAINST_ROOT is not set: this hook runs only in a twin contender of --against');
register('./against-resolve.mjs', import.meta.url, { data: { root } });
