import { CSV_HEADER, MAX_LISTED_INVALID } from '../../engine/index.js';
import { requestSchema, responseSchema } from '../schemas.js';

/** Optional match-day window every imported row gets. */
export const voucherImportQuery = requestSchema<{ valid_from?: string; valid_until?: string }>('voucherImportQuery', {
  type: 'object', additionalProperties: false, required: [],
  properties: {
    valid_from: { type: 'string', format: 'date-time', description: 'ISO 8601 UTC: every imported voucher works from this instant (match day)' },
    valid_until: { type: 'string', format: 'date-time', description: 'ISO 8601 UTC: every imported voucher stops working at this instant' },
  },
});

const csvFile = {
  type: 'string',
  description: `UTF-8 CSV (BOM optional, CRLF or LF, RFC 4180 quoting) whose header is exactly ${CSV_HEADER.join(',')}; see docs/vouchers-bulk.md`,
};

/** The request body's two media types (OpenAPI only: the body is streamed, not validated as JSON). */
export const voucherImportBody = {
  'text/csv': { schema: csvFile },
  'multipart/form-data': {
    schema: { type: 'object', required: ['file'], properties: { file: { ...csvFile, format: 'binary' } } },
    encoding: { file: { contentType: 'text/csv' } },
  },
};

export const voucherImportReport = responseSchema('voucherImportReport', {
  type: 'object',
  properties: {
    batch_id: { type: 'string', description: 'Every imported voucher carries it (vbt_...)', examples: ['vbt_0a1b2c3d4e5f6g7h'] },
    imported: { type: 'integer', description: 'Rows imported; each code works at the portal when this answer arrives' },
    invalid: { type: 'integer', description: 'Rows not imported (all counted, however many are listed)' },
    invalid_rows: {
      type: 'array', description: `The first ${MAX_LISTED_INVALID} invalid rows, in file order`,
      items: {
        type: 'object',
        properties: {
          line: { type: 'integer', description: 'Line in the file where the record starts (the header is line 1)' },
          reason: {
            enum: ['column_count', 'csv_malformed', 'code_invalid', 'max_uses_invalid', 'expires_at_invalid', 'unknown_bandwidth_profile',
              'notes_invalid', 'duplicate_in_file', 'code_exists'],
          },
          message: { type: 'string' },
        },
      },
    },
    invalid_rows_truncated: { type: 'boolean', description: `More than ${MAX_LISTED_INVALID} invalid rows: the rest are counted, not listed` },
    time_zone: { type: 'string', description: 'The zone a date-only expires_at was read in (end of that day there)' },
  },
});
