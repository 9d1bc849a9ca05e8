import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import net from "node:net";
import type { WebSocketServer as WebSocketServerType } from "ws";

// ws's ESM entry resolves to its browser build under vitest; the CommonJS entry is the server.
const require = createRequire(import.meta.url);
const { WebSocketServer } = require("ws") as typeof import("ws");

export interface Relay {
  /** Value for the Worker's NEON_WS_PROXY binding, e.g. `127.0.0.1:41234`. */
  proxy: string;
  port: number;
  close(): Promise<void>;
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);

/**
 * Stands in for Neon's WebSocket proxy on a developer machine: the Neon driver sends the Postgres
 * protocol inside WebSocket frames to `/v1?address=host:port`, and this pipes the bytes to that
 * TCP address. Only loopback targets are allowed, so it can never be used to reach other hosts.
 */
export async function startRelay(port = 0): Promise<Relay> {
  const server: WebSocketServerType = new WebSocketServer({ host: "127.0.0.1", port });
  server.on("connection", (socket, request) => {
    const address = new URL(request.url ?? "/", "http://relay").searchParams.get("address") ?? "";
    const separator = address.lastIndexOf(":");
    const host = address.slice(0, separator);
    const targetPort = Number(address.slice(separator + 1));
    if (!LOOPBACK.has(host) || !Number.isInteger(targetPort)) {
      socket.close(1008, "only loopback targets are allowed");
      return;
    }
    const tcp = net.connect({ host, port: targetPort });
    const pending: Buffer[] = [];
    tcp.on("connect", () => {
      for (const chunk of pending) tcp.write(chunk);
      pending.length = 0;
    });
    socket.on("message", (data: Buffer) => {
      if (tcp.connecting) pending.push(data);
      else tcp.write(data);
    });
    tcp.on("data", (chunk) => {
      if (socket.readyState === socket.OPEN) socket.send(chunk);
    });
    const closeBoth = () => {
      const neverConnected = tcp.connecting || tcp.bytesWritten === 0;
      tcp.destroy();
      const closeSocket = () => {
        if (socket.readyState === socket.OPEN || socket.readyState === socket.CONNECTING) socket.close();
      };
      // The driver flushes its first write on a timer; closing at once when the target refuses makes
      // it write to a closed socket, which surfaces as an uncaught error in the Worker.
      if (neverConnected) setTimeout(closeSocket, 50);
      else closeSocket();
    };
    tcp.on("close", closeBoth);
    tcp.on("error", closeBoth);
    socket.on("close", closeBoth);
    socket.on("error", closeBoth);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  const actualPort = (server.address() as AddressInfo).port;
  return {
    proxy: `127.0.0.1:${actualPort}`,
    port: actualPort,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of server.clients) client.terminate();
        server.close(() => resolve());
      }),
  };
}
