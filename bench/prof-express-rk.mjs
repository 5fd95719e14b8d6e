import express from 'express';
import { rateLimit } from '@ratekit/express';
const mode = process.argv[2];
const app = express();
if (mode === 'ratekit') app.use(rateLimit({ windowMs: 3600000, limit: 1e9, algorithm: 'fixed-window' }));
if (mode === 'bare') {}
if (mode === 'erl') app.use(rateLimit({ windowMs: 3600000, limit: 1e9 }));
app.get('/', (_req, res) => { res.send('hello world'); });
const server = app.listen(3999, '127.0.0.1', () => console.log('up'));
setTimeout(() => { server.close(); process.exit(0); }, Number(process.argv[3] ?? 8000));
