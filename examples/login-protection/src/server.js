import { createApp } from './app.js';

const port = Number(process.env.PORT ?? 3000);
createApp().listen(port, () => console.log(`login-protection example on http://localhost:${port} (POST /login {"username","password"})`));
