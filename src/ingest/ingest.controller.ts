import { Controller, HttpCode, Inject, Post, Req, UseGuards } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AccessTokenGuard } from '../auth/access-token.guard';
import { RequiresScope } from '../auth/requires-scope.decorator';
import { ErrorCode } from '../common/errors/error-code';
import { LoyaltyException } from '../common/errors/loyalty.exception';
import type { LoyaltyModuleOptions } from '../loyalty-module-options.interface';
import { LOYALTY_MODULE_OPTIONS } from '../loyalty.module-definition';
import { parseRecord, parseRecordLine } from './ingest-record';
import { IngestService, IngestSummary, summarize } from './ingest.service';
import type { RecordOutcome } from './record-outcome';
import type { NumberedRecord } from './record-stream';

export const INGEST_PATH = '/ingest';
export const DEFAULT_INGEST_MAX_RECORDS = 10_000;

/** What became of one record of the request: `line` is its NDJSON line, or its array position. */
export type IngestResult = { line: number } & RecordOutcome;

export interface IngestResponse extends IngestSummary {
  results: IngestResult[];
}

/**
 * POST /ingest: the records of PRODUCT.md section 3 as NDJSON (`application/x-ndjson`) or as a
 * JSON array, from a token with the `ingest` scope. Every valid record is applied in one
 * transaction, so a request is in the database whole or not at all; the answer gives each
 * record's outcome with its line (NDJSON) or 1-based position (array).
 */
@Controller()
@UseGuards(AccessTokenGuard)
@RequiresScope('ingest')
export class IngestController {
  private readonly maxRecords: number;

  constructor(
    private readonly ingest: IngestService,
    @Inject(LOYALTY_MODULE_OPTIONS) options: LoyaltyModuleOptions,
  ) {
    this.maxRecords = options.ingestMaxRecords ?? DEFAULT_INGEST_MAX_RECORDS;
  }

  @Post(INGEST_PATH)
  @HttpCode(200)
  async apply(@Req() request: FastifyRequest): Promise<IngestResponse> {
    const numbered = numberedRecords(request.body);
    if (numbered.length > this.maxRecords) {
      throw new LoyaltyException(
        ErrorCode.REQUEST_TOO_LARGE,
        `A request may carry at most ${this.maxRecords} records (got ${numbered.length}); split it`,
      );
    }
    const valid = numbered.filter((item) => item.parsed.ok);
    const outcomes = await this.ingest.applyRecords(
      valid.map((item) => (item.parsed.ok ? item.parsed.record : undefined!)),
    );
    const byLine = new Map(valid.map((item, i) => [item.line, outcomes[i]]));
    const results = numbered.map(({ line, parsed }): IngestResult => ({
      line,
      ...(parsed.ok ? byLine.get(line)! : { status: 'refused', reason: parsed.reason }),
    }));
    return { ...summarize(results), results };
  }
}

/** The records of a body: a JSON array (already parsed) or NDJSON text. */
function numberedRecords(body: unknown): NumberedRecord[] {
  if (Array.isArray(body)) {
    return body.map((value, index) => ({ line: index + 1, parsed: parseRecord(value) }));
  }
  if (typeof body === 'string') {
    const records: NumberedRecord[] = [];
    body.split('\n').forEach((text, index) => {
      if (text.trim() !== '') records.push({ line: index + 1, parsed: parseRecordLine(text) });
    });
    return records;
  }
  throw new LoyaltyException(
    ErrorCode.MALFORMED_REQUEST,
    'The body must be a JSON array of records (application/json) or one record per line (application/x-ndjson)',
  );
}
