import { once } from 'node:events';
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { JsonClient } from './http';

describe('JsonClient', () => {
  it('sends a request again on a fresh socket when the reused keep-alive socket was reset, and only then', async () => {
    // One HTTP response per connection; the second request on a connection gets a reset, as
    // from a server that closed the idle socket just as the client reused it.
    const seen = new WeakMap<Socket, number>();
    let connections = 0;
    const server = createServer((sock) => {
      connections++;
      sock.on('data', () => {
        const n = (seen.get(sock) ?? 0) + 1;
        seen.set(sock, n);
        if (n > 1) {
          sock.resetAndDestroy();
          return;
        }
        sock.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: keep-alive\r\n\r\n{}');
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const client = new JsonClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, 1);
    try {
      expect((await client.get('/health')).status).toBe(200);
      expect((await client.get('/health')).status).toBe(200);
      expect(connections).toBe(2);
    } finally {
      client.close();
      server.close();
    }
  });
});
