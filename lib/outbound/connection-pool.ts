import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { guardedLookup } from './address-guard';

/** Where a connection goes: one pool of idle connections per origin. */
export interface Origin {
  key: string;
  protocol: 'http:' | 'https:';
  /** Without the brackets of an IPv6 literal. */
  host: string;
  port: number;
}

export function originOf(url: URL): Origin {
  const protocol = url.protocol as Origin['protocol'];
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const port = url.port ? Number(url.port) : protocol === 'https:' ? 443 : 80;
  return { key: `${protocol}//${url.host}`, protocol, host, port };
}

/** What a connection reports to the exchange using it. */
export interface ConnectionUser {
  onData(chunk: Buffer): void;
  /** The socket closed; `error` when it failed. Called once. */
  onClose(error: Error | undefined): void;
}

/** Silence after which a busy connection is given up (Lambda's streamed-response idle limit). */
const busyIdleMs = 5 * 60_000;
/** How long an idle connection is trusted when the server did not say (`keep-alive: timeout=N`). */
const defaultIdleMs = 30_000;
const maxIdlePerOrigin = 256;
const maxTlsSessions = 100;

export class Connection {
  user: ConnectionUser | undefined;
  /** Exchanges this connection carried to the end; 0 while it serves its first. */
  served = 0;
  /** When an idle connection stops being trusted (epoch ms). */
  idleUntil = 0;
  private error: Error | undefined;
  private closed = false;

  constructor(
    readonly socket: Socket,
    private readonly pool: ConnectionPool,
    readonly origin: Origin,
  ) {
    socket.on('data', (chunk: Buffer) => {
      if (this.user) this.user.onData(chunk);
      // Bytes nobody asked for: the connection is out of step with the server.
      else socket.destroy();
    });
    socket.on('error', (error) => {
      this.error ??= error;
    });
    socket.on('timeout', () => {
      socket.destroy(this.user ? Object.assign(new Error('no data from the provider for 5 minutes'), { code: 'ETIMEDOUT' }) : undefined);
    });
    socket.on('close', () => {
      this.closed = true;
      this.pool.forget(this);
      const user = this.user;
      this.user = undefined;
      user?.onClose(this.error);
    });
  }

  get usable(): boolean {
    return !this.closed && !this.socket.destroyed;
  }

  /** Ends the connection; its user hears about it through `onClose`. */
  destroy(error?: Error): void {
    if (error) this.error ??= error;
    this.socket.destroy();
  }
}

/**
 * Keep-alive connections per origin, reused most-recently-used first. Every connection is opened
 * through the address guard's lookup, so a host that resolves to a refused address never gets one.
 */
export class ConnectionPool {
  private readonly idle = new Map<string, Connection[]>();
  private readonly tlsSessions = new Map<string, Buffer>();

  constructor(private readonly options: { ca?: string | Buffer } = {}) {}

  /** An idle connection to the origin, or a new one (always new with `fresh`). */
  acquire(origin: Origin, fresh = false): Connection {
    if (!fresh) {
      const stack = this.idle.get(origin.key);
      const now = Date.now();
      while (stack && stack.length > 0) {
        const connection = stack.pop()!;
        if (connection.usable && connection.idleUntil > now) {
          connection.socket.ref();
          connection.socket.setTimeout(busyIdleMs);
          return connection;
        }
        connection.destroy();
      }
    }
    return new Connection(this.connect(origin), this, origin);
  }

  /** Takes a connection back after a complete exchange, for `idleMs` at most. */
  release(connection: Connection, idleMs = defaultIdleMs): void {
    connection.user = undefined;
    connection.served += 1;
    let stack = this.idle.get(connection.origin.key);
    if (!connection.usable || idleMs <= 0 || (stack && stack.length >= maxIdlePerOrigin)) {
      connection.destroy();
      return;
    }
    if (!stack) this.idle.set(connection.origin.key, (stack = []));
    connection.idleUntil = Date.now() + idleMs;
    // Idle connections must not keep the process alive; the busy timeout also retires them.
    connection.socket.unref();
    stack.push(connection);
  }

  forget(connection: Connection): void {
    const stack = this.idle.get(connection.origin.key);
    const index = stack ? stack.indexOf(connection) : -1;
    if (index >= 0) stack!.splice(index, 1);
  }

  close(): void {
    for (const stack of this.idle.values()) for (const connection of stack.splice(0)) connection.destroy();
  }

  private connect(origin: Origin): Socket {
    let socket: Socket;
    if (origin.protocol === 'https:') {
      const tlsSocket: TLSSocket = tlsConnect({
        host: origin.host,
        port: origin.port,
        servername: isIP(origin.host) === 0 ? origin.host : undefined,
        lookup: guardedLookup as never,
        ALPNProtocols: ['http/1.1'],
        session: this.tlsSessions.get(origin.key),
        ...(this.options.ca ? { ca: this.options.ca } : {}),
      });
      // Resumed sessions save a round trip on the next new connection to the same origin.
      tlsSocket.on('session', (session: Buffer) => {
        if (this.tlsSessions.size >= maxTlsSessions) this.tlsSessions.clear();
        this.tlsSessions.set(origin.key, session);
      });
      socket = tlsSocket;
    } else {
      socket = netConnect({ host: origin.host, port: origin.port, lookup: guardedLookup as never });
    }
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 10_000);
    socket.setTimeout(busyIdleMs);
    return socket;
  }
}
