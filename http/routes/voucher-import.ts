import type { AppError, Config, Engine } from '../../engine/index.js';
import { csvUpload } from '../csv-upload.js';
import { route, type Route, type RouteContext } from '../router.js';
import { voucherImportBody, voucherImportQuery, voucherImportReport } from './voucher-import.schemas.js';

type ImportQuery = { valid_from?: string; valid_until?: string };

/**
 * CSV import of vouchers (docs/vouchers-bulk.md): the public API's and the
 * console's upload. The body is streamed (`streamBody`), split out of a
 * multipart form when it is one, and handed to the engine's VoucherImport.
 */
export function voucherImportRoutes(engine: Engine): Route[] {
  const common = {
    method: 'post', auth: true, module: 'vouchers', streamBody: { limit: (config: Config) => config.voucherImportMaxBytes }, querySchema: voucherImportQuery,
    requestTypes: voucherImportBody, responseSchema: voucherImportReport, status: 200,
    errors: {
      400: 'csv_header_invalid (nothing imported); csv_record_unreadable (a record too long or never closed); validation_failed (the valid_from/valid_until window)', 413: 'payload_too_large: the file passes VOUCHER_IMPORT_MAX_BYTES',
      415: 'unsupported_media_type', 503: 'voucher_import_interrupted',
    },
    handler: async ({ principal, bodyStream, contentType, q }: RouteContext<undefined, ImportQuery>) => {
      const file = csvUpload(bodyStream!, contentType);
      const report = await engine.voucherImport.import(principal.tenant.id, file, {
        valid_from: q.valid_from ? new Date(q.valid_from) : null,
        valid_until: q.valid_until ? new Date(q.valid_until) : null,
      });
      return { status: 200, body: report };
    },
    audit: (_ctx: RouteContext<undefined, ImportQuery>, out: { batch_id: string; imported: number; invalid: number }) => ({
      event: 'voucher_import' as const, details: { batch_id: out.batch_id, imported: out.imported, invalid: out.invalid },
    }),
    // Failed after chunks were committed: those vouchers are live, so the import is recorded with what it made (and the error).
    auditOnError: (_ctx: RouteContext<undefined, ImportQuery>, err: AppError) => {
      const f = err.fields ?? {};
      if (typeof f.imported !== 'number' || f.imported <= 0 || typeof f.batch_id !== 'string') return null;
      return { event: 'voucher_import' as const, details: { batch_id: f.batch_id, imported: f.imported, invalid: f.invalid ?? null, error: err.code } };
    },
  } as const;
  return [
    route({ ...common, path: '/v1/vouchers/import', surface: 'public',
      summary: 'Import vouchers from a CSV file (code,max_uses,expires_at,bandwidth_profile,notes); valid rows are imported, the others reported by line' }),
    route({ ...common, path: '/api/v1/vouchers/import', surface: 'console', summary: "The console's CSV upload: the same import as POST /v1/vouchers/import" }),
  ];
}
