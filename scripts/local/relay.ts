import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import net from "node:net";
import type { WebSocket, WebSocketServer as WebSocketServerType } from "ws";
import { SessionSlots } from "./session-slots";

// ws's ESM entry resolves to its browser build under vitest; the CommonJS entry is the server.
const require = createRequire(import.meta.url);
const { WebSocketServer } = require("ws") as typeof import("ws");

export interface Relay {
  /** Value for the Worker's NEON_WS_PROXY binding, e.g. `127.0.0.1:41234`. */
  proxy: string;
  port: number;
  close(): Promise<void>;
}

export interface RelayOptions {
  /**
   * Keep Postgres sessions open between Worker connections, as Neon's connection pooler does
   * (default true). Only sessions that logged in without a password challenge are pooled, and
   * each is reset with DISCARD ALL before reuse. Off for a single-session embedded database,
   * where DISCARD ALL would reset the one session everybody shares.
   */
  pooling?: boolean;
  /**
   * At most this many Worker connections hold a Postgres session at once (default 64); the next
   * ones wait in arrival order, as behind Neon's pooler, instead of each opening a session until
   * Postgres refuses with "too many clients" (53300). Idle pooled sessions come on top (at most
   * 8 per database and user).
   */
  maxSessions?: number;
  /**
   * A simulated distance between the Worker and the database (default 0): every message waits half
   * of this round trip on its way each way, and a new connection waits three round trips before
   * it opens (TCP, TLS and the WebSocket upgrade of a real connection to Neon's proxy). For
   * measuring what a request's sequential statements and connections cost a Worker that runs far
   * from its database (`npm run bench -- --db-rtt`); the sessions behind the relay are unchanged.
   */
  roundTripMs?: number;
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);
const PROTOCOL_3 = 196_608;
/** Idle pooled sessions close after this long, and at most this many wait per database and user. */
const IDLE_MS = 30_000;
const MAX_IDLE_PER_KEY = 8;

const DEFAULT_MAX_SESSIONS = 64;

/** Splits a byte stream into Postgres protocol messages (1-byte type, int32 length, body). */
class MessageFramer {
  #buffer: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Buffer[] {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    const messages: Buffer[] = [];
    while (this.#buffer.length >= 5) {
      const size = 1 + this.#buffer.readInt32BE(1);
      if (this.#buffer.length < size) break;
      messages.push(this.#buffer.subarray(0, size));
      this.#buffer = this.#buffer.subarray(size);
    }
    return messages;
  }
}

/**
 * Follows the server's messages without copying them, only to know whether the session is idle
 * (its last message a ReadyForQuery with status I): result rows stream through untouched.
 */
class ReadinessScanner {
  readonly #header = Buffer.alloc(5);
  #headerBytes = 0;
  #bodyLeft = 0;
  #type = 0;
  /** The last ReadyForQuery's status byte, or 0 while a reply is still under way. */
  status = 0x49;

  scan(chunk: Buffer): void {
    let offset = 0;
    while (offset < chunk.length) {
      if (this.#bodyLeft > 0) {
        if (this.#type === 0x5a && this.#bodyLeft === 1) this.status = chunk[offset] ?? 0;
        const step = Math.min(this.#bodyLeft, chunk.length - offset);
        this.#bodyLeft -= step;
        offset += step;
        continue;
      }
      this.#header[this.#headerBytes++] = chunk[offset++] ?? 0;
      if (this.#headerBytes === 5) {
        this.#headerBytes = 0;
        this.#type = this.#header[0] ?? 0;
        this.#bodyLeft = this.#header.readInt32BE(1) - 4;
      }
    }
  }
}

/** A logged-in server session and what it said at login, replayed to the clients that reuse it. */
interface ServerSession {
  tcp: net.Socket;
  /** AuthenticationOk through the first ReadyForQuery: parameter statuses and the backend key. */
  greeting: Buffer;
  idleTimer?: NodeJS.Timeout;
}

function simpleQuery(text: string): Buffer {
  const body = Buffer.from(`${text}\0`, "utf8");
  const message = Buffer.alloc(5 + body.length);
  message.write("Q", 0, "latin1");
  message.writeInt32BE(4 + body.length, 1);
  body.copy(message, 5);
  return message;
}

/** The parameters of a protocol 3.0 StartupMessage, or undefined for anything else. */
function startupParameters(message: Buffer): Map<string, string> | undefined {
  if (message.length < 8 || message.readInt32BE(4) !== PROTOCOL_3) return undefined;
  const fields = message.subarray(8).toString("utf8").split("\0");
  const parameters = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length && fields[i] !== ""; i += 2) {
    parameters.set(fields[i] as string, fields[i + 1] as string);
  }
  return parameters;
}

/**
 * Stands in for Neon's WebSocket proxy (and its connection pooler) on a developer machine: the
 * Neon driver sends the Postgres protocol inside WebSocket frames to `/v1?address=host:port`, and
 * this carries it to that TCP address. Only loopback targets are allowed, so it can never be used
 * to reach other hosts.
 */
export async function startRelay(port = 0, options: RelayOptions = {}): Promise<Relay> {
  const pooling = options.pooling ?? true;
  const roundTripMs = Math.max(0, options.roundTripMs ?? 0);
  const idle = new Map<string, ServerSession[]>();
  const server: WebSocketServerType = new WebSocketServer({
    host: "127.0.0.1",
    port,
    // The upgrade's answer waits for the round trips a connection from afar costs.
    ...(roundTripMs > 0
      ? {
          verifyClient: (_info: unknown, accept: (result: boolean) => void) =>
            void setTimeout(() => accept(true), 3 * roundTripMs),
        }
      : {}),
  });

  const release = (key: string, session: ServerSession) => {
    const waiting = idle.get(key) ?? [];
    if (waiting.length >= MAX_IDLE_PER_KEY || session.tcp.destroyed) {
      session.tcp.destroy();
      return;
    }
    session.tcp.removeAllListeners("data");
    session.tcp.removeAllListeners("close");
    session.tcp.removeAllListeners("error");
    const drop = () => {
      // A session dropped early (its database dropped, the server gone) must not leave its timer
      // running: the relay's process would wait for it after close().
      clearTimeout(session.idleTimer);
      session.tcp.destroy();
      const list = idle.get(key);
      if (list)
        idle.set(
          key,
          list.filter((other) => other !== session),
        );
    };
    session.tcp.on("close", drop);
    session.tcp.on("error", drop);
    session.idleTimer = setTimeout(drop, IDLE_MS);
    waiting.push(session);
    idle.set(key, waiting);
  };

  const take = (key: string): ServerSession | undefined => {
    const session = idle.get(key)?.pop();
    if (!session) return undefined;
    clearTimeout(session.idleTimer);
    session.tcp.removeAllListeners("close");
    session.tcp.removeAllListeners("error");
    return session;
  };

  const slots = new SessionSlots(options.maxSessions ?? DEFAULT_MAX_SESSIONS);

  server.on("connection", (socket, request) => {
    if (roundTripMs > 0) delayMessages(socket, roundTripMs / 2);
    // The client's first bytes arrive at once; they wait here with it until a slot is free.
    const early: Buffer[] = [];
    const hold = (data: Buffer) => early.push(data);
    socket.on("message", hold);
    const ticket = slots.acquire();
    let holding = false;
    socket.once("close", () => {
      if (holding) slots.release();
      else ticket.cancel();
    });
    ticket.granted.then(() => {
      holding = true;
      socket.off("message", hold);
      if (socket.readyState !== socket.OPEN) {
        holding = false;
        slots.release();
        return;
      }
      begin(socket, request.url, early);
    });
  });

  /** A Worker connection that holds a slot: its target, then a pooled or new session. */
  function begin(socket: WebSocket, url: string | undefined, early: Buffer[]): void {
    const address = new URL(url ?? "/", "http://relay").searchParams.get("address") ?? "";
    const separator = address.lastIndexOf(":");
    const host = address.slice(0, separator);
    const targetPort = Number(address.slice(separator + 1));
    if (!LOOPBACK.has(host) || !Number.isInteger(targetPort)) {
      socket.close(1008, "only loopback targets are allowed");
      return;
    }
    let startup = Buffer.alloc(0);
    const onFirstBytes = (data: Buffer) => {
      startup = Buffer.concat([startup, data]);
      if (startup.length < 4 || startup.length < startup.readInt32BE(0)) return;
      socket.off("message", onFirstBytes);
      const length = startup.readInt32BE(0);
      const parameters = pooling ? startupParameters(startup.subarray(0, length)) : undefined;
      if (!parameters) {
        pipe(socket, connectTo(host, targetPort), startup);
        return;
      }
      const key = `${host}:${targetPort}\n${[...parameters].sort().join("\n")}`;
      const rest = startup.subarray(length);
      const reused = take(key);
      if (reused) {
        if (socket.readyState === socket.OPEN) socket.send(reused.greeting);
        serve(socket, key, reused, rest);
      } else {
        login(socket, key, connectTo(host, targetPort), startup.subarray(0, length), rest);
      }
    };
    socket.on("message", onFirstBytes);
    if (early.length > 0) onFirstBytes(Buffer.concat(early));
  }

  /** A new server session: the login passes through; it is pooled only if no password was asked. */
  function login(socket: WebSocket, key: string, tcp: net.Socket, startup: Buffer, rest: Buffer): void {
    const framer = new MessageFramer();
    const greeting: Buffer[] = [];
    const early: Buffer[] = [rest];
    let settled = false;
    tcp.write(startup);
    const onClientBytes = (data: Buffer) => early.push(data);
    const handOver = () => {
      settled = true;
      tcp.off("data", onServerBytes);
      tcp.off("error", onServerError);
      socket.off("message", onClientBytes);
      socket.off("close", onClientClose);
    };
    const onServerBytes = (chunk: Buffer) => {
      for (const message of framer.push(chunk)) {
        const type = String.fromCharCode(message[0] ?? 0);
        if (type === "R" && message.readInt32BE(5) !== 0) {
          // A password challenge: this session is the client's alone, bytes pass through.
          handOver();
          socket.send(message);
          pipe(socket, tcp, Buffer.concat(early));
          return;
        }
        greeting.push(message);
        if (type === "E") {
          handOver();
          socket.send(Buffer.concat(greeting));
          tcp.destroy();
          socket.close();
          return;
        }
        if (type === "Z") {
          handOver();
          const session: ServerSession = { tcp, greeting: Buffer.concat(greeting) };
          if (socket.readyState === socket.OPEN) socket.send(session.greeting);
          serve(socket, key, session, Buffer.concat(early));
          return;
        }
      }
    };
    const onServerError = () => {
      if (settled) return;
      settled = true;
      tcp.destroy();
      // As in `pipe`: give the driver's timed first write a moment before closing.
      setTimeout(() => socket.close(), 50);
    };
    const onClientClose = () => {
      if (!settled) tcp.destroy();
    };
    tcp.on("data", onServerBytes);
    tcp.on("error", onServerError);
    socket.on("message", onClientBytes);
    socket.on("close", onClientClose);
  }

  /**
   * A logged-in session serving one client. When the client leaves with the session idle, the
   * session is reset and pooled; otherwise (mid-query, broken) it is closed.
   */
  function serve(socket: WebSocket, key: string, session: ServerSession, pending: Buffer): void {
    const { tcp } = session;
    const fromClient = new MessageFramer();
    const fromServer = new ReadinessScanner();
    let released = false;
    const finish = (reusable: boolean) => {
      if (released) return;
      released = true;
      tcp.removeAllListeners("data");
      if (!reusable || fromServer.status !== 0x49 || tcp.destroyed) {
        tcp.destroy();
        return;
      }
      const reset = new MessageFramer();
      tcp.on("data", (chunk: Buffer) => {
        for (const message of reset.push(chunk)) {
          if (message[0] === 0x5a) release(key, session);
        }
      });
      tcp.write(simpleQuery("DISCARD ALL"));
    };
    const fromClientBytes = (data: Buffer) => {
      const forward: Buffer[] = [];
      for (const message of fromClient.push(data)) {
        if (message[0] === 0x58) {
          // Terminate: the client is done; the session is not.
          if (forward.length > 0) tcp.write(Buffer.concat(forward));
          finish(true);
          if (socket.readyState === socket.OPEN) socket.close();
          return;
        }
        // A reply is due: the session is busy until its ReadyForQuery.
        fromServer.status = 0;
        forward.push(message);
      }
      // One write per frame, as the client sent it: several small writes would meet Nagle's
      // algorithm and the server's delayed ACK (a 40 ms stall between Parse and Execute).
      if (forward.length > 0)
        tcp.write(forward.length === 1 ? (forward[0] as Buffer) : Buffer.concat(forward));
    };
    tcp.on("data", (chunk: Buffer) => {
      fromServer.scan(chunk);
      if (socket.readyState === socket.OPEN) socket.send(chunk);
    });
    tcp.on("close", () => {
      released = true;
      if (socket.readyState === socket.OPEN) socket.close();
    });
    tcp.on("error", () => tcp.destroy());
    socket.on("message", fromClientBytes);
    socket.on("close", () => finish(true));
    socket.on("error", () => finish(false));
    if (pending.length > 0) fromClientBytes(pending);
  }

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
        for (const sessions of idle.values()) {
          for (const session of sessions) {
            clearTimeout(session.idleTimer);
            session.tcp.destroy();
          }
        }
        idle.clear();
        server.close(() => resolve());
      }),
  };
}

/**
 * Delays what a WebSocket carries by `oneWayMs` each way, in order: its incoming messages and its
 * close reach the relay's listeners that much later, and what the relay sends (and its close)
 * leaves that much later.
 * Timers of one delay fire in the order they were set, so the protocol's order holds.
 */
function delayMessages(socket: WebSocket, oneWayMs: number): void {
  const send = socket.send.bind(socket) as (data: Buffer) => void;
  socket.send = ((data: Buffer) => {
    setTimeout(() => {
      if (socket.readyState === socket.OPEN) send(data);
    }, oneWayMs);
  }) as typeof socket.send;
  // A close leaves after what was sent before it.
  const close = socket.close.bind(socket);
  socket.close = ((code?: number, reason?: string) => {
    setTimeout(() => close(code, reason), oneWayMs);
  }) as typeof socket.close;
  const emit = socket.emit.bind(socket);
  socket.emit = ((event: string, ...args: unknown[]) => {
    if (event !== "message" && event !== "close") return emit(event, ...args);
    setTimeout(() => emit(event, ...args), oneWayMs);
    return true;
  }) as typeof socket.emit;
}

/** A TCP connection to Postgres that sends small protocol messages at once (no Nagle delay). */
function connectTo(host: string, port: number): net.Socket {
  return net.connect({ host, port, noDelay: true });
}

/** Plain byte pipe between a WebSocket and a TCP connection (no pooling). */
function pipe(socket: WebSocket, tcp: net.Socket, first: Buffer): void {
  const pending: Buffer[] = first.length > 0 ? [first] : [];
  const flush = () => {
    for (const chunk of pending) tcp.write(chunk);
    pending.length = 0;
  };
  if (tcp.connecting) tcp.on("connect", flush);
  else flush();
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
}
