import './use-postgres'; // first: the app module reads process.env.DATABASE_URL when it is evaluated
import { NestFactory } from '@nestjs/core';
import { AppModule } from '../src/app.module';
import { hostSuite } from './host-suite';

// As src/main.ts creates it; abortOnError: false makes a failed boot a failed test, not an exit.
hostSuite(() => NestFactory.create(AppModule, { logger: ['error', 'warn'], abortOnError: false }));
