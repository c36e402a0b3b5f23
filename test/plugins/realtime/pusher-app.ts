import PusherServer from 'pusher';
import { activate } from '../../helpers/app.js';
import { listeningApp } from '../../helpers/listening-app.js';

/** A listening gateway, an account with its Pusher app, and the `pusher` server SDK pointed at the gateway. */
export async function pusherApp(t: Parameters<typeof listeningApp>[0]) {
  const { app, base } = await listeningApp(t);
  const port = Number(new URL(base).port);
  const a = await activate(app);
  const creds = (await app.inject({ method: 'POST', url: '/v1/realtime/pusher', headers: a.auth })).json();
  const server = new PusherServer({
    appId: creds.app_id,
    key: creds.key,
    secret: creds.secret,
    host: '127.0.0.1',
    port: String(port),
    useTLS: false,
  });
  return { app, a, creds, server, port };
}
