import { Agent, request, type IncomingMessage } from 'node:http';

/** A keep-alive JSON client to the service (`port` may change: a restarted service). */
export class JsonClient {
  private readonly agent: Agent;
  /** `maxSockets`: connections at most; requests beyond wait in the agent's queue. */
  constructor(private readonly host: string, public port: number, maxSockets: number) {
    this.agent = new Agent({ keepAlive: true, maxSockets });
  }

  post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: any }> {
    return this.send('POST', path, body, headers);
  }

  send(method: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: any }> {
    const data = Buffer.from(JSON.stringify(body));
    return new Promise((resolve, reject) => {
      const req = request({
        host: this.host, port: this.port, path, method, agent: this.agent,
        headers: { 'content-type': 'application/json', 'content-length': data.length, ...headers },
      }, (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          try { resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : null }); } catch { resolve({ status: res.statusCode ?? 0, json: text }); }
        });
      });
      req.on('error', reject);
      req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
      req.end(data);
    });
  }

  /** A GET whose body is read and counted, not parsed: a page. */
  page(path: string, headers?: Record<string, string>): Promise<{ status: number; bytes: number }> {
    return new Promise((resolve, reject) => {
      const req = request({ host: this.host, port: this.port, path, method: 'GET', agent: this.agent, headers }, (res: IncomingMessage) => {
        let bytes = 0;
        res.on('data', (c: Buffer) => { bytes += c.length; });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
      });
      req.on('error', reject);
      req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
      req.end();
    });
  }

  /** Drops the idle connections (those to a service that died, say). */
  close(): void { this.agent.destroy(); }
}
