import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** One message the listener accepted. */
export interface ReceivedMail {
  from: string;
  to: string[];
  /** The whole message as sent (headers and body). */
  raw: string;
  subject: string;
  /** The body after the header block, quoted-printable soft breaks undone. */
  text: string;
  /** The AUTH user, when the client logged in. */
  user: string | null;
}

/**
 * A real SMTP server (smtp-server) on 127.0.0.1, without TLS, accepting any
 * sender and recipient and any login, collecting what it receives. Tests
 * configure `url` (or one with credentials) as SMTP_URL or a tenant's ref.
 */
export class SmtpListener {
  readonly messages: ReceivedMail[] = [];
  /**
   * When set, the server answers each message's DATA only once this settles: a
   * reply (code >= 400) refuses the message, nothing accepts it. A test holds a
   * send with it (a slow server) or refuses one.
   */
  onMessage: ((to: string[]) => Promise<{ code: number; message: string } | void>) | null = null;
  private waiters: (() => void)[] = [];
  private constructor(private readonly server: SMTPServer, readonly port: number) {}

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  /** The URL with a login (the listener accepts any). */
  urlWithLogin(user: string, password: string): string {
    return `smtp://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${this.port}`;
  }

  static async start(): Promise<SmtpListener> {
    let listener: SmtpListener | undefined;
    const server = new SMTPServer({
      secure: false, disabledCommands: ['STARTTLS'], authOptional: true, allowInsecureAuth: true, logger: false,
      onAuth: (auth, _session, cb) => cb(null, { user: auth.username }),
      onData: (stream, session, cb) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          const to = session.envelope.rcptTo.map((r) => r.address);
          const accept = (): void => {
            listener!.collect(Buffer.concat(chunks).toString('utf8'), session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              to, typeof session.user === 'string' ? session.user : null);
            cb();
          };
          const hook = listener!.onMessage;
          if (!hook) return accept();
          void hook(to).then((reply) => {
            if (!reply) return accept();
            cb(Object.assign(new Error(reply.message), { responseCode: reply.code }));
          });
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    listener = new SmtpListener(server, (server.server.address() as AddressInfo).port);
    return listener;
  }

  /** The first message to `to` that arrives (or has arrived), within `ms`. */
  async waitFor(to: string, ms = 10_000): Promise<ReceivedMail> {
    const until = Date.now() + ms;
    for (;;) {
      const m = this.messages.find((x) => x.to.includes(to));
      if (m) return m;
      const left = until - Date.now();
      if (left <= 0) throw new Error(`no mail to ${to} within ${ms} ms (got ${this.messages.length} for others)`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => { clearTimeout(t); resolve(); });
      });
    }
  }

  /** The six-digit code of the last mail to `to`. */
  lastCode(to: string): string | null {
    const m = [...this.messages].reverse().find((x) => x.to.includes(to));
    return m ? /\b(\d{6})\b/.exec(m.text)?.[1] ?? null : null;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private collect(raw: string, from: string, to: string[], user: string | null): void {
    const split = raw.indexOf('\r\n\r\n');
    const head = split < 0 ? raw : raw.slice(0, split);
    const body = split < 0 ? '' : raw.slice(split + 4);
    const subject = decodeHeader(/^Subject: (.*(?:\r\n[ \t].*)*)/im.exec(head)?.[1] ?? '');
    const qp = /content-transfer-encoding: quoted-printable/i.test(head);
    const text = qp ? decodeQp(body) : /content-transfer-encoding: base64/i.test(head) ? Buffer.from(body, 'base64').toString('utf8') : body;
    this.messages.push({ from, to, raw, subject, text, user });
    for (const w of this.waiters.splice(0)) w();
  }
}

function decodeQp(s: string): string {
  const bytes = s.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

/** RFC 2047 encoded words (=?UTF-8?Q?...?= or ?B?), as nodemailer writes non-ASCII subjects. */
function decodeHeader(s: string): string {
  return s.replace(/\r\n[ \t]/g, ' ').replace(/=\?utf-8\?([QB])\?([^?]*)\?=\s*/gi, (_m, enc: string, data: string) =>
    enc.toUpperCase() === 'B' ? Buffer.from(data, 'base64').toString('utf8') : decodeQp(data.replace(/_/g, ' ')));
}
