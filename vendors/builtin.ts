import type { VendorDefinition } from '../core/kit/vendor.js';
import sandboxPayments from './sandbox-payments/index.js';
import openai from './openai/index.js';
import openaiCompatible from './openai-compatible/index.js';
import anthropic from './anthropic/index.js';
import gemini from './gemini/index.js';
import localStorage from './local-storage/index.js';
import s3 from './s3/index.js';
import minio from './minio/index.js';
import sharp from './sharp/index.js';
import imglyBackground from './imgly-background/index.js';
import removeBg from './remove-bg/index.js';
import pdfLib from './pdf-lib/index.js';
import chromium from './chromium/index.js';
import tesseract from './tesseract/index.js';
import smsCapture from './sms-capture/index.js';
import twilio from './twilio/index.js';
import vonage from './vonage/index.js';
import capture from './capture/index.js';
import smtp from './smtp/index.js';
import resend from './resend/index.js';
import postmark from './postmark/index.js';
import sendgrid from './sendgrid/index.js';
import ses from './ses/index.js';
import turnstile from './turnstile/index.js';
import hcaptcha from './hcaptcha/index.js';
import recaptcha from './recaptcha/index.js';
import stripe from './stripe/index.js';
import service from './service/index.js';
import localRender from './local-render/index.js';
import openaiVideo from './openai-video/index.js';
import runway from './runway/index.js';
import luma from './luma/index.js';

/** Adapters that ship with the gateway, by the name `use:` gives them. */
export const builtinVendors: VendorDefinition<any>[] = [
  sandboxPayments,
  openai,
  openaiCompatible,
  anthropic,
  gemini,
  localStorage,
  s3,
  minio,
  sharp,
  imglyBackground,
  removeBg,
  pdfLib,
  chromium,
  tesseract,
  smsCapture,
  twilio,
  vonage,
  capture,
  smtp,
  resend,
  postmark,
  sendgrid,
  ses,
  turnstile,
  hcaptcha,
  recaptcha,
  stripe,
  service,
  localRender,
  openaiVideo,
  runway,
  luma,
];
