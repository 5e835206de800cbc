import { ConfigurableModuleBuilder, Module } from '@nestjs/common';
import { checkLoyaltyOptions } from './check-options';
import type { LoyaltyModuleOptions } from './loyalty-module-options.interface';

/** The injection token of the module's options. */
export const LOYALTY_MODULE_OPTIONS = Symbol('LOYALTY_MODULE_OPTIONS');

/** Resolved once the options are checked: a host with options that cannot work stops at boot. */
export const LOYALTY_OPTIONS_CHECKED = Symbol('LOYALTY_OPTIONS_CHECKED');

export const {
  ConfigurableModuleClass: LoyaltyOptionsConfigurableModule,
  ASYNC_OPTIONS_TYPE: LOYALTY_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<LoyaltyModuleOptions>({
  optionsInjectionToken: LOYALTY_MODULE_OPTIONS,
})
  .setClassMethodName('forRoot')
  // Global, so that each feature module reads the options without the host passing them down.
  .setExtras({}, (definition) => ({
    ...definition,
    global: true,
    providers: [
      ...(definition.providers ?? []),
      {
        provide: LOYALTY_OPTIONS_CHECKED,
        useFactory: (options: LoyaltyModuleOptions) => checkLoyaltyOptions(options),
        inject: [LOYALTY_MODULE_OPTIONS],
      },
    ],
    exports: [...(definition.exports ?? []), LOYALTY_MODULE_OPTIONS, LOYALTY_OPTIONS_CHECKED],
  }))
  .build();

/** Holds the options given to LoyaltyModule.forRoot / forRootAsync, for every feature module. */
@Module({})
export class LoyaltyOptionsModule extends LoyaltyOptionsConfigurableModule {}
