/**
 * Free loopback ports for the local stack's servers (SQS, its proxy, DynamoDB Local).
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A free port, held by a placeholder server until `release()`: a caller that must name the port
 * before its server can listen (the SQS proxy, whose stand-ins are started with its endpoint) keeps
 * it reserved meanwhile, so another process's listen(0) cannot take it (EADDRINUSE seen in CI).
 */
export async function reservePort(): Promise<{ port: number; release: () => Promise<void> }> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  let released = false;
  return {
    port,
    release: async () => {
      if (released) return;
      released = true;
      server.close();
      await once(server, 'close');
    },
  };
}

export async function freePort(): Promise<number> {
  const reserved = await reservePort();
  await reserved.release();
  return reserved.port;
}
