import { PassThrough, type Readable } from 'node:stream';
import { Busboy } from '@fastify/busboy';
import { Errors } from '../engine/index.js';

/**
 * The CSV file of an upload as a stream of its bytes: the body itself for
 * `text/csv`, or the part named `file` of a `multipart/form-data` body,
 * split out as it streams (@fastify/busboy; other parts are read past and
 * dropped). Back-pressure runs through: a slow reader pauses the splitter,
 * which pauses the body, which pauses the socket. An error of the body
 * (too large, too slow, client gone) reaches the reader as itself.
 */
export function csvUpload(body: Readable, contentType: string): Readable {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type === 'text/csv') return body;
  if (type !== 'multipart/form-data') throw Errors.CSV_MEDIA_TYPE();
  let splitter;
  try {
    splitter = Busboy({ headers: { 'content-type': contentType }, limits: { files: 1, fields: 16, fieldSize: 4096, parts: 32 } });
  } catch {
    throw Errors.VALIDATION_FAILED('The multipart body has no boundary', [{ field: 'content-type', message: 'boundary required' }]);
  }
  const out = new PassThrough();
  // As for the body: the reader may attach after an early failure, and finds it in `errored`.
  out.on('error', () => undefined);
  let found = false;
  splitter.on('file', (field, file) => {
    if (field !== 'file' || found) {
      file.resume();
      return;
    }
    found = true;
    file.on('error', (err) => out.destroy(err));
    file.pipe(out);
  });
  splitter.on('finish', () => {
    if (!found) out.destroy(Errors.CSV_FILE_MISSING());
  });
  splitter.on('error', (err: unknown) => {
    out.destroy(Errors.VALIDATION_FAILED(`The multipart body is malformed: ${(err as Error).message}`, [{ field: 'body', message: 'malformed multipart' }]));
  });
  body.on('error', (err) => out.destroy(err));
  // The reader stopped early (a wrong header, an error): stop reading the body too.
  out.on('close', () => {
    if (!out.readableEnded) body.destroy();
  });
  body.pipe(splitter);
  return out;
}
