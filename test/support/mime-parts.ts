/** One part of a multipart message: its headers (lower-case names), the file name if an attachment, the decoded body. */
export interface MimePart {
  headers: Record<string, string>;
  filename: string | null;
  contentType: string;
  body: Buffer;
}

function headerBlock(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const i = line.indexOf(':');
    if (i > 0) out[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  return out;
}

function decode(body: string, encoding: string | undefined): Buffer {
  if (/base64/i.test(encoding ?? '')) return Buffer.from(body.replace(/\s+/g, ''), 'base64');
  if (/quoted-printable/i.test(encoding ?? '')) {
    return Buffer.from(body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16))), 'latin1');
  }
  return Buffer.from(body, 'utf8');
}

/** The message's top-level headers. */
export function mailHeaders(raw: string): Record<string, string> {
  const split = raw.indexOf('\r\n\r\n');
  return headerBlock(split < 0 ? raw : raw.slice(0, split));
}

/**
 * The leaf parts of a MIME message as nodemailer writes it (multipart/mixed,
 * possibly nested), decoded. Enough for tests to read a mail's text and
 * attachments; not a general parser.
 */
export function mimeParts(raw: string): MimePart[] {
  const split = raw.indexOf('\r\n\r\n');
  const headers = headerBlock(split < 0 ? raw : raw.slice(0, split));
  const body = split < 0 ? '' : raw.slice(split + 4);
  const type = headers['content-type'] ?? 'text/plain';
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (/^multipart\//i.test(type) && boundary) {
    const pieces = body.split(`--${boundary}`).slice(1);
    const out: MimePart[] = [];
    for (const p of pieces) {
      if (p.startsWith('--')) break;
      out.push(...mimeParts(p.replace(/^\r\n/, '').replace(/\r\n$/, '')));
    }
    return out;
  }
  const disposition = headers['content-disposition'] ?? '';
  const filename = /filename="?([^";]+)"?/i.exec(disposition)?.[1] ?? null;
  return [{ headers, filename, contentType: type, body: decode(body, headers['content-transfer-encoding']) }];
}
