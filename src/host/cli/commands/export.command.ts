import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BOARD_CSV_HEADER, boardCsvLine } from '../../../common/csv';
import { BoardExportService } from '../../../export/board-export.service';
import { withContext } from '../support/app-context';
import { parseFlags, positiveInt, UsageError } from '../support/cli-args';
import type { Command } from './command';

export const exportCommand: Command<{ spaceId: number; sprintId: number | null }> = {
  name: 'export',
  usage: 'export --space ID [--sprint ID]',
  help: `  export --space ID [--sprint ID]
                              print a board as CSV in rank order as of one moment (one read
                              snapshot): rank,address,username,points`,
  parse(args) {
    const option = parseFlags(args, ['space', 'sprint'], this.usage);
    const spaceId = positiveInt(option('space'), '--space', 0);
    if (spaceId === 0) throw new UsageError(`usage: ${this.usage}`);
    const sprint = option('sprint');
    return { spaceId, sprintId: sprint === undefined ? null : positiveInt(sprint, '--sprint', 0) };
  },
  async run({ spaceId, sprintId }, config) {
    await withContext(
      config,
      async (app) => {
        // The snapshot GET /export reads: writers of a serving instance go on meanwhile.
        const board = await app.get(BoardExportService).open(spaceId, sprintId);
        async function* csv(): AsyncGenerator<string> {
          yield `${BOARD_CSV_HEADER}\n`;
          for await (const page of board.pages()) {
            yield page.map((row) => `${boardCsvLine(row)}\n`).join('');
          }
        }
        try {
          await pipeline(Readable.from(csv()), process.stdout, { end: false });
        } catch (error) {
          await board.close();
          // `export ... | head` closes the pipe early: that is a reader's choice, not a failure.
          if ((error as NodeJS.ErrnoException).code !== 'EPIPE') throw error;
        }
      },
      { migrate: false },
    );
    return 0;
  },
};
