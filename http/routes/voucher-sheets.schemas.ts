import { MAX_SHEET_IDS, MAX_SHEET_MESSAGE, SHEET_LANGS, SHEET_LAYOUTS, STATUS_FILTERS, type SheetLang, type SheetLayout, type StatusFilter } from '../../engine/index.js';
import { oneOf, requestSchema } from '../schemas.js';

export interface SheetQuery {
  ids?: string;
  batch_id?: string;
  status?: StatusFilter;
  q?: string;
  layout: SheetLayout;
  lang?: SheetLang;
  hotspot_id?: string;
  message?: string;
}

const id = '[A-Za-z0-9_]{1,64}';

export const voucherSheetQuery = requestSchema<SheetQuery>('voucherSheetQuery', {
  type: 'object', additionalProperties: false, required: [],
  description: 'Which vouchers (exactly one of ids, batch_id, or the list filter status/q), how, and for which portal',
  properties: {
    ids: {
      type: 'string', pattern: `^${id}(,${id}){0,${MAX_SHEET_IDS - 1}}$`, maxLength: MAX_SHEET_IDS * 65,
      description: `Voucher ids, comma-separated (at most ${MAX_SHEET_IDS}); one not of this tenant makes the answer 404 voucher_not_found`,
    },
    batch_id: { type: 'string', pattern: '^vbt_[A-Za-z0-9_]{1,60}$', description: 'The batch_id a console batch or an import answered' },
    status: oneOf(STATUS_FILTERS),
    q: { type: 'string', minLength: 1, maxLength: 64, description: 'Vouchers whose code or notes contain this text (any case), as the list' },
    layout: { ...oneOf(SHEET_LAYOUTS), default: 'a4', description: 'a4: a grid of 8 vouchers per A4 page with cut lines; receipt: 80 mm roll, one voucher per page' },
    lang: { ...oneOf(SHEET_LANGS), description: "Default: tr when the hotspot's time zone is Europe/Istanbul, else en" },
    hotspot_id: { type: 'string', pattern: `^${id}$`, description: "Whose portal the QR codes open and whose logo is printed; may be omitted when the tenant has one hotspot" },
    message: { type: 'string', minLength: 1, maxLength: MAX_SHEET_MESSAGE, description: `Text printed on every voucher (at most ${MAX_SHEET_MESSAGE} characters)` },
  },
});
