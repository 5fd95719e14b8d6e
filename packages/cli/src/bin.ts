#!/usr/bin/env node
/** The `ratekit` bin: `ratekit simulate …`. */
import { main } from './cli.js';

// `main` reports every failure as an exit code and never rejects: nothing to catch here.
void main(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
}).then((code) => {
  process.exitCode = code;
});
