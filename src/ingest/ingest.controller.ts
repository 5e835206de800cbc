import { Controller, HttpCode, Inject, Post, Req, UseGuards } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AccessTokenGuard } from '../auth/access-token.guard';
import { RequiresScope } from '../auth/requires-scope.decorator';
import { ErrorCode } from '../common/errors/error-code';
import { LoyaltyException } from '../common/errors/loyalty.exception';
import type { LoyaltyModuleOptions } from '../options/loyalty-module-options.interface';
import { LOYALTY_MODULE_OPTIONS } from '../options/loyalty.module-definition';
import { Readable } from 'node:stream';
import { parseRecord } from '../records/ingest-record';
import { IngestService, IngestSummary, summarize } from './ingest.service';
import { applyNumbered, NumberedOutcome, NumberedRecord, readNdjson } from './record-stream';

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
 * its line (NDJSON) or 1-based position (array).
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
    const numbered = await numberedRecords(request.body);
    if (numbered.length > this.maxRecords) {
      throw new LoyaltyException(
        ErrorCode.REQUEST_TOO_LARGE,
        `A request may carry at most ${this.maxRecords} records (got ${numbered.length}); split it`,
      );
    }
    const results = await applyNumbered(this.ingest, numbered);
    return { ...summarize(results), results };
  }
}

/** The records of a body: a JSON array (already parsed) or NDJSON text, numbered as `import` does. */
async function numberedRecords(body: unknown): Promise<NumberedRecord[]> {
  if (Array.isArray(body)) {
    return body.map((value, index) => ({ line: index + 1, parsed: parseRecord(value) }));
  }
  if (typeof body === 'string') {
    const records: NumberedRecord[] = [];
    for await (const record of readNdjson(Readable.from([body]))) records.push(record);
    return records;
  }
  throw new LoyaltyException(
    ErrorCode.MALFORMED_REQUEST,
    'The body must be a JSON array of records (application/json) or one record per line (application/x-ndjson)',
  );
}
