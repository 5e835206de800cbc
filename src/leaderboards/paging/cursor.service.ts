import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import type { Repository } from 'typeorm';
import type { LoyaltyModuleOptions } from '../../options/loyalty-module-options.interface';
import { LOYALTY_MODULE_OPTIONS } from '../../options/loyalty.module-definition';
import { ServiceSettingEntity } from '../../storage/schema/service-setting.entity';
import { CursorCodec } from './cursor-codec';

const SECRET_SETTING = 'cursor_secret';

/** The cursor codec, signed with the configured secret or the one kept in the database. */
@Injectable()
export class CursorService {
  private codec?: Promise<CursorCodec>;

  constructor(
    @Inject(LOYALTY_MODULE_OPTIONS) private readonly options: LoyaltyModuleOptions,
    @InjectRepository(ServiceSettingEntity)
    private readonly settings: Repository<ServiceSettingEntity>,
  ) {}

  getCodec(): Promise<CursorCodec> {
    if (!this.codec) {
      this.codec = this.load();
      this.codec.catch(() => (this.codec = undefined));
    }
    return this.codec;
  }

  private async load(): Promise<CursorCodec> {
    if (this.options.cursorSecret)
      return new CursorCodec(Buffer.from(this.options.cursorSecret, 'utf8'));
    let stored = await this.settings.findOneBy({ name: SECRET_SETTING });
    if (!stored) {
      // Two instances may race to create it: the insert is ignored for the loser, who re-reads.
      await this.settings
        .createQueryBuilder()
        .insert()
        .values({ name: SECRET_SETTING, value: randomBytes(32).toString('base64') })
        .orIgnore()
        .execute();
      stored = await this.settings.findOneByOrFail({ name: SECRET_SETTING });
    }
    return new CursorCodec(Buffer.from(stored.value, 'base64'));
  }
}
