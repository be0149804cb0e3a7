import { MAX_REPORT_VENUES, REPORT_PDF_LANGS, type ReportPdfLang } from '../../engine/index.js';
import { oneOf, requestSchema } from '../schemas.js';

export interface ReportPdfQuery {
  from: string;
  to: string;
  hotspot_id?: string;
  lang?: ReportPdfLang;
}

// Dates are plain strings here: the engine checks them (reportRange), so a bad one gets its own code and sentence.
const day = (what: string) => ({ type: 'string' as const, maxLength: 40, description: `${what}, YYYY-MM-DD in the venue's zone (both ends included; at most 366 days)` });

export const reportPdfQuery = requestSchema<ReportPdfQuery>('reportPdfQuery', {
  type: 'object', additionalProperties: false, required: ['from', 'to'],
  description: 'The period, the venues and the language of a PDF report',
  properties: {
    from: day('First day'), to: day('Last day'),
    hotspot_id: {
      type: 'string', maxLength: 1000,
      description: `A venue of the tenant; repeat the parameter or comma-separate for several (at most ${MAX_REPORT_VENUES}; more than one needs the multi_venue module). Absent: all of the tenant's venues`,
    },
    lang: { ...oneOf(REPORT_PDF_LANGS), description: "tr or en; default tr when the report's zone is Europe/Istanbul, else en" },
  },
});
