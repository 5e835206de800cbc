import {
  Controller,
  Get,
  Inject,
  Logger,
  Query,
  Res,
  StreamableFile,
  UseFilters,
  UseGuards,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { AccessTokenGuard } from '../auth/access-token.guard';
import type { AuthenticatedToken } from '../auth/access-tokens.service';
import { CurrentToken } from '../auth/current-token.decorator';
import { RequiresScope } from '../auth/requires-scope.decorator';
import { ErrorCode } from '../common/errors/error-code';
import { LoyaltyException } from '../common/errors/loyalty.exception';
import { IngestExceptionFilter } from '../ingest/ingest-exception.filter';
import type { LoyaltyModuleOptions } from '../options/loyalty-module-options.interface';
import { LOYALTY_MODULE_OPTIONS } from '../options/loyalty.module-definition';
import { BoardExportService } from './board-export.service';
import {
  DEFAULT_EXPORT_STALL_MS,
  EXPORT_FORMATS,
  EXPORT_MEDIA_TYPES,
  ExportFormat,
  exportStream,
} from './export-stream';

export const EXPORT_PATH = '/export';
const PARAMETERS = ['spaceId', 'sprintId', 'format'];
const MAX_ID = 2_147_483_647;

/** A query parameter given once, or undefined; anything else is INVALID_ARGUMENT. */
function single(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined || typeof value === 'string') return value;
  throw new LoyaltyException(ErrorCode.INVALID_ARGUMENT, `${name} must be given once`);
}

function id(query: Record<string, unknown>, name: string): number | undefined {
  const value = single(query, name);
  if (value === undefined) return undefined;
  const parsed = /^[1-9][0-9]{0,9}$/.test(value) ? Number(value) : NaN;
  if (!(parsed <= MAX_ID))
    throw new LoyaltyException(
      ErrorCode.INVALID_ARGUMENT,
      `${name} must be a whole number from 1 to ${MAX_ID}`,
    );
  return parsed;
}

/**
 * GET /export?spaceId=N[&sprintId=M][&format=csv|ndjson]: a whole board (all-time, or one sprint)
 * as of one moment, streamed in rank order (docs/api.md, Export), for a token with the `query`
 * scope: the same data a page walk reads, without what a walk of a changing board misses or
 * repeats. `X-Board-Entries` and `X-Board-As-Of` give N and the moment. Every refusal comes before
 * the body, in the error envelope; a failure while streaming cuts the connection, so a short body
 * never passes for a whole one.
 */
@Controller()
@UseGuards(AccessTokenGuard)
@UseFilters(IngestExceptionFilter)
@RequiresScope('query')
export class BoardExportController {
  private readonly stallMs: number;
  private readonly logger = new Logger('Export');

  constructor(
    private readonly exports: BoardExportService,
    private readonly adapterHost: HttpAdapterHost,
    @Inject(LOYALTY_MODULE_OPTIONS) options: LoyaltyModuleOptions,
  ) {
    this.stallMs = options.boardExport?.stallTimeoutMs ?? DEFAULT_EXPORT_STALL_MS;
  }

  /**
   * A failure while streaming: the answer is cut, never ended, so that a client cannot take the
   * rows it got for the whole board (Nest calls this on Express; Fastify cuts it itself).
   */
  private cut(error: Error, response: unknown): void {
    this.logger.error(`Export failed while streaming: ${error.message}`);
    const raw = (response as { raw?: { destroy?: () => void } }).raw ?? response;
    (raw as { destroy?: () => void }).destroy?.();
  }

  @Get(EXPORT_PATH)
  async export(
    @Query() query: Record<string, unknown>,
    @CurrentToken() token: AuthenticatedToken | null,
    @Res({ passthrough: true }) response: unknown,
  ): Promise<StreamableFile> {
    if (!token) throw new LoyaltyException(ErrorCode.TOKEN_REQUIRED);
    const unknown = Object.keys(query).find((name) => !PARAMETERS.includes(name));
    if (unknown !== undefined)
      throw new LoyaltyException(
        ErrorCode.INVALID_ARGUMENT,
        `Unknown parameter ${JSON.stringify(unknown.slice(0, 40))}: the parameters are ${PARAMETERS.join(', ')}`,
      );
    const spaceId = id(query, 'spaceId');
    if (spaceId === undefined)
      throw new LoyaltyException(ErrorCode.INVALID_ARGUMENT, 'spaceId is required');
    const sprintId = id(query, 'sprintId') ?? null;
    const format = single(query, 'format') ?? 'csv';
    if (!(EXPORT_FORMATS as readonly string[]).includes(format))
      throw new LoyaltyException(
        ErrorCode.INVALID_ARGUMENT,
        `format must be ${EXPORT_FORMATS.join(' or ')}`,
      );
    const board = await this.exports.open(spaceId, sprintId, token);
    try {
      const kind = format as ExportFormat;
      const name = `space-${spaceId}-${sprintId === null ? 'all-time' : `sprint-${sprintId}`}.${kind}`;
      const http = this.adapterHost.httpAdapter;
      http.setHeader(response, 'X-Board-Entries', String(board.entries));
      http.setHeader(response, 'X-Board-As-Of', board.asOf.toISOString());
      http.setHeader(response, 'Cache-Control', 'no-store');
      return new StreamableFile(exportStream(board, kind, this.stallMs), {
        type: EXPORT_MEDIA_TYPES[kind],
        disposition: `attachment; filename="${name}"`,
      }).setErrorHandler((error, raw) => this.cut(error, raw));
    } catch (error) {
      await board.close();
      throw error;
    }
  }
}
