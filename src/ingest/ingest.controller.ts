import { Controller, HttpCode, Inject, Post, Req, UseFilters, UseGuards } from '@nestjs/common';
import { AccessTokenGuard } from '../auth/access-token.guard';
import type { AuthenticatedToken } from '../auth/access-tokens.service';
import { CurrentToken } from '../auth/current-token.decorator';
import { RequiresScope } from '../auth/requires-scope.decorator';
import { ErrorCode } from '../common/errors/error-code';
import { LoyaltyException } from '../common/errors/loyalty.exception';
import type {
  LoyaltyModuleOptions,
  LoyaltyObserver,
  SpaceWritten,
} from '../options/loyalty-module-options.interface';
import { LOYALTY_MODULE_OPTIONS } from '../options/loyalty.module-definition';
import { IngestExceptionFilter } from './ingest-exception.filter';
import { notifyObserver } from '../options/notify-observer';
import { IngestHttpRequest, ndjsonLimitOf, readIngestBody } from './ingest-body';
import { IngestRoute } from './ingest-route';
import { IngestService, IngestSummary, summarize } from './ingest.service';
import { applyNumbered, NumberedOutcome, NumberedRecord } from './record-stream';

export const INGEST_PATH = '/ingest';
export const DEFAULT_INGEST_MAX_RECORDS = 10_000;

export interface IngestResponse extends IngestSummary {
  results: NumberedOutcome[];
}

/**
 * POST /ingest: the records of docs/api.md (Ingestion) as NDJSON (`application/x-ndjson`) or as a
 * JSON array, from a token with the `ingest` scope. Every valid record is applied in one
 * transaction (on SQLite, possibly shared with other requests: see GroupCommitTransactionRunner), so
 * a request is in the database whole or not at all; the answer gives each record's outcome with
 * its line (NDJSON) or 1-based position (array). Every refusal, the guard's included, is answered
 * in the error envelope by the route's own filter (see also IngestHttpSetup).
 */
@Controller()
@UseGuards(AccessTokenGuard)
@UseFilters(IngestExceptionFilter)
@RequiresScope('ingest')
export class IngestController {
  private readonly maxRecords: number;
  private readonly observer?: LoyaltyObserver;

  constructor(
    private readonly ingest: IngestService,
    @Inject(LOYALTY_MODULE_OPTIONS) options: LoyaltyModuleOptions,
  ) {
    this.maxRecords = options.ingestMaxRecords ?? DEFAULT_INGEST_MAX_RECORDS;
    this.observer = options.observer;
  }

  @Post(INGEST_PATH)
  @HttpCode(200)
  @IngestRoute()
  async apply(
    @Req() request: IngestHttpRequest,
    @CurrentToken() token: AuthenticatedToken | null,
  ): Promise<IngestResponse> {
    // The guard always gives a token here; a space token writes into its own space only.
    if (!token) throw new LoyaltyException(ErrorCode.TOKEN_REQUIRED);
    const numbered = await readIngestBody(request, {
      maxRecords: this.maxRecords,
      maxBytes: ndjsonLimitOf(request),
    });
    const results = await applyNumbered(this.ingest, numbered, 1, { spaceId: token.spaceId });
    const summary = summarize(results);
    notifyObserver(() => this.observer?.recordsIngested?.(summary));
    if (this.observer?.spacesWritten) {
      const written = spacesWritten(numbered, results);
      if (written.length > 0) {
        const by = { tokenId: token.id, tokenName: token.name };
        notifyObserver(() => this.observer?.spacesWritten?.(written, by));
      }
    }
    return { ...summary, results };
  }
}

/** The space records among `numbered` that were applied (accepted), as the observer hears them. */
function spacesWritten(
  numbered: readonly NumberedRecord[],
  results: readonly NumberedOutcome[],
): SpaceWritten[] {
  // Most requests carry points only: no space record, no set of their lines.
  if (!numbered.some(({ parsed }) => parsed.ok && parsed.record.type === 'space')) return [];
  const accepted = new Set(
    results.filter((result) => result.status === 'accepted').map((result) => result.line),
  );
  const written: SpaceWritten[] = [];
  for (const { line, parsed } of numbered) {
    if (!parsed.ok || parsed.record.type !== 'space' || !accepted.has(line)) continue;
    const { id, name, description, alias } = parsed.record;
    written.push({
      id,
      ...(name === undefined ? {} : { name }),
      ...(description === undefined ? {} : { description }),
      ...(alias === undefined ? {} : { alias }),
    });
  }
  return written;
}
