"""The redaction corpus: secret shapes that must be caught, look-alikes that must survive.

Every key here is made up (or a vendor's documented example); the strings are assembled
from pieces only where a whole one would be long.
"""

from __future__ import annotations

B62 = "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY"  # 32 characters of base62
HEX40 = "9f2c4e6a8b0d1f3e5a7c9b1d3f5e7a9c0b2d4f6e"
PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" + B62
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6Ikp"
       "vaG4gRG9lIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")

CAUGHT: tuple[tuple[str, str], ...] = (
    # cloud keys
    ("export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE",
     "export AWS_ACCESS_KEY_ID=[secret:aws-access-key]"),
    ("temporary id ASIAY34FZKBOKMUTVV7A in the session",
     "temporary id [secret:aws-access-key] in the session"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
     "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".replace(
         "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "[secret:aws-secret-key]")),
    ('AWS_SECRET_ACCESS_KEY="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
     'AWS_SECRET_ACCESS_KEY="[secret:aws-secret-key]"'),
    ('{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n'
     + PEM_BODY + '\\n-----END PRIVATE KEY-----\\n", "client_email": "a@b.iam"}',
     '{"type": "service_account", "private_key": "[secret:private-key]\\n", '
     '"client_email": "a@b.iam"}'),
    ("DefaultEndpointsProtocol=https;AccountName=prod;AccountKey=" + B62 + "Zm9vYmFy==;"
     "EndpointSuffix=core.windows.net",
     "DefaultEndpointsProtocol=https;AccountName=prod;AccountKey=[secret:azure-key];"
     "EndpointSuffix=core.windows.net"),
    ("Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey="
     + B62 + "=",
     "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;"
     "SharedAccessKey=[secret:azure-key]"),
    # provider tokens
    ("OPENAI_API_KEY=sk-" + B62 + "T3BlbkFJ" + B62[:12],
     "OPENAI_API_KEY=[secret:openai-key]"),
    ("use sk-proj-" + B62 + "_" + B62 + " for the project",
     "use [secret:openai-key] for the project"),
    ("key: sk-svcacct-" + B62, "key: [secret:openai-key]"),
    ("client = Anthropic(api_key='sk-ant-api03-" + B62 + B62 + "-AA')",
     "client = Anthropic(api_key='[secret:anthropic-key]')"),
    ("sk-ant-admin01-" + B62, "[secret:anthropic-key]"),
    ("git clone https://ghp_" + B62 + "abcd@github.com/o/r.git",
     "git clone https://[secret:github-token]@github.com/o/r.git"),
    ("GITHUB_TOKEN: gho_" + B62 + "wxyz", "GITHUB_TOKEN: [secret:github-token]"),
    ("ghs_" + B62 + "0000 and ghu_" + B62 + "1111",
     "[secret:github-token] and [secret:github-token]"),
    ("github_pat_11ABCDEFG0" + B62 + "_" + B62, "[secret:github-token]"),
    ("CI_JOB glpat-" + B62[:20], "CI_JOB [secret:gitlab-token]"),
    ("slack bot xoxb-1234567890-0987654321-" + B62[:24],
     "slack bot [secret:slack-token]"),
    ("user token xoxp-11-22-33-" + B62, "user token [secret:slack-token]"),
    ("curl -X POST https://hooks.slack.com/services/T0123ABCD/B0456EFGH/" + B62[:24],
     "curl -X POST https://hooks.slack.com/services/[secret:slack-webhook]"),
    ("stripe.api_key = 'sk_live_" + B62[:24] + "'", "stripe.api_key = '[secret:stripe-key]'"),
    ("rk_live_" + B62 + " restricted", "[secret:stripe-key] restricted"),
    ("publishable pk_test_" + B62[:24], "publishable [secret:stripe-key]"),
    ("STRIPE_WEBHOOK_SECRET=whsec_" + B62, "STRIPE_WEBHOOK_SECRET=[secret:secret]"),
    ("https://maps.googleapis.com/maps/api/js?key=AIzaSyA" + B62,
     "https://maps.googleapis.com/maps/api/js?key=[secret:google-api-key]"),
    ("//registry.npmjs.org/:_authToken=npm_" + B62 + "abcd",
     "//registry.npmjs.org/:_authToken=[secret:token]"),
    ("HF_TOKEN=hf_" + B62 + "ab", "HF_TOKEN=[secret:token]"),
    # private keys and JWTs
    ("-----BEGIN RSA PRIVATE KEY-----\n" + PEM_BODY + "\n" + PEM_BODY
     + "\n-----END RSA PRIVATE KEY-----\nthen ssh", "[secret:private-key]\nthen ssh"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA" + B62 + "\n"
     "-----END OPENSSH PRIVATE KEY-----", "[secret:private-key]"),
    ("truncated: -----BEGIN EC PRIVATE KEY-----\n" + PEM_BODY,
     "truncated: [secret:private-key]"),
    ("-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF" + B62 + "\n-----END PGP PRIVATE KEY "
     "BLOCK-----", "[secret:private-key]"),
    ("Authorization: Bearer " + JWT, "Authorization: Bearer [secret:jwt]"),
    ("the cookie was " + JWT + ".", "the cookie was [secret:jwt]."),
    ("-H 'Authorization: Bearer " + B62 + "'", "-H 'Authorization: Bearer [secret:bearer-token]'"),
    ('"Authorization": "Basic dXNlcjpodW50ZXIy"', '"Authorization": "Basic [secret:basic-auth]"'),
    # passwords in assignments
    ("password=hunter2", "password=[secret:password]"),
    ('{"username": "ada", "password": "correct horse battery staple"}',
     '{"username": "ada", "password": "[secret:password]"}'),
    ("  PASSWORD: s3cr3t!", "  PASSWORD: [secret:password]"),
    ('db_password = "Tr0ub4dor&3"', 'db_password = "[secret:password]"'),
    ("conn.login(password='pa55word'.encode())",
     "conn.login(password='[secret:password]'.encode())"),
    ('{\\"passwd\\": \\"letmein99\\"}', '{\\"passwd\\": \\"[secret:password]\\"}'),
    ("mysql --user=root --password=Zx9!pq2w -h db",
     "mysql --user=root --password=[secret:password] -h db"),
    # a word and its 's is a possessive, not a sentence's "it's": the password itself
    ("export DB_PASSWORD=Summer's", "export DB_PASSWORD=[secret:password]'s"),
    ("the wifi password: Summer's", "the wifi password: [secret:password]'s"),
    ("password: hunter\u2019s", "password: [secret:password]"),
    # credentials in URLs and connection strings
    ("postgres://app:hunter2@db.internal:5432/prod",
     "postgres://app:[secret:password]@db.internal:5432/prod"),
    ("REDIS_URL=redis://default:Pa55w0rd@cache:6379/0",
     "REDIS_URL=redis://default:[secret:password]@cache:6379/0"),
    ("mongodb+srv://admin:S3cret-Pass@cluster0.mongodb.net/test",
     "mongodb+srv://admin:[secret:password]@cluster0.mongodb.net/test"),
    ("Server=tcp:db;Database=app;User Id=sa;Password=Str0ng!Pass;",
     "Server=tcp:db;Database=app;User Id=sa;Password=[secret:password];"),
    # .env lines whose key names a secret
    ("SECRET_KEY=dev", "SECRET_KEY=[secret:api-key]"),
    ("export DEPLOY_TOKEN=abc123", "export DEPLOY_TOKEN=[secret:token]"),
    ("WEBHOOK_SECRET=4f9a1c2e7b", "WEBHOOK_SECRET=[secret:secret]"),
    ("STRIPE_KEY=k9s8d7f6g5", "STRIPE_KEY=[secret:api-key]"),
    ('client_secret: "Zq8xW2vE5rT7yU9i"', 'client_secret: "[secret:secret]"'),
    ('"api_key": "0123456789abcdef0123"', '"api_key": "[secret:api-key]"'),
    # key names in Chinese, Japanese and Korean; the sentence around the value stays
    ("数据库密码：Pg_2024!secure，然后重启", "数据库密码：[secret:password]，然后重启"),
    ("密碼: hunter2", "密碼: [secret:password]"),
    ("パスワード：「tiger-lily」です", "パスワード：「[secret:password]」です"),
    ("비밀번호: hunter2! 입니다", "비밀번호: [secret:password] 입니다"),
    ("令牌=abcd1234efgh5678", "令牌=[secret:token]"),
    ('API 密钥: "AbCdEf123456"', 'API 密钥: "[secret:api-key]"'),
)
"""Text with secrets, and the text as it must come out."""

SURVIVES: tuple[str, ...] = (
    "commit " + HEX40 + " fixed the build",
    "git log --oneline: 3f2c1a9 merge main",
    "session id 123e4567-e89b-12d3-a456-426614174000",
    "UUID('f47ac10b-58cc-4372-a567-0e02b2c3d479')",
    "<img src=\"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42"
    "mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==\">",
    "background: url(data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAw"
    "MC9zdmciLz4=)",
    "upgraded requests from 2.31.0 to 2.32.3 (python 3.11.7)",
    "version: v1.4.0-rc.2+build.5",
    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  app.tar.gz",
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    '"integrity": "sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+LFTGHVxVjcXPs17LhbZ'
    'VGedAJv8XZ1tvj5FvSg=="',
    "the password reset email never arrived",
    "Forgot password? Click reset.",
    "we rotate the token every hour and keep the secret in vault",
    "color: #ff5733; background-color: rgba(0, 0, 0, 0.5);",
    "--primary: #1e90ff;",
    "/home/ada/projects/harkback/adapters/stores/sql/fulltext_and_more/very/long/path/file.py",
    "C:\\Users\\ada\\AppData\\Local\\Programs\\Python\\Python311\\python.exe",
    "max_tokens=4096, temperature=0.2",
    '{"max_tokens": 1024, "token_count": 87, "tokens": 12}',
    "password = getpass.getpass('Password: ')",
    "password = os.environ['DB_PASSWORD']",
    "connect(host=h, password=password)",
    "token = request.headers.get('X-Token')",
    "PASSWORD=${DB_PASSWORD}",
    'api_key: "{{ secrets.API_KEY }}"',
    "password: <your password here>",
    "password=********",
    "key = 'name'",
    "primary_key=True",
    '{"key": "value", "sort_key": "created_at"}',
    "ssh git@github.com:ada/harkback.git",
    "https://user@example.com/path and mysql://root@localhost/db",
    "http://localhost:8080/api/v1/items?page=2&sort=desc",
    "see https://github.com/ada/harkback/commit/" + HEX40,
    "The task-runner-skeleton-for-the-new-login-page is done",
    "scikit-learn sk-learn alias; ask-for-help-channel",
    "ASIA and AKIA are prefixes; AKIA alone is not a key",
    "pip install pk_tools; the pk_test fixture passed",
    "the eyJ prefix is base64 for {\"",
    "AIza is how Google keys start",
    "ghp_ is the GitHub prefix; ghp_short",
    "Bearer token auth is configured in settings.py",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n"
    "-----END PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQG\n"
    "-----END CERTIFICATE-----",
    "[secret:aws-access-key] was redacted before",
    "passwordless login via magic link",
    "the secret: patience",
    "Token: 42",
    "tokenizer.encode('hello world') returned [15339, 1917]",
    "AccountName=prod;EndpointSuffix=core.windows.net",
    "Epoch 1700000000 and 1700000000000 ms",
    # Code that compares or declares rather than assigns: the "=" of "==" was taken for
    # the value, so the code lost a character and kept the literal it compared.
    "if password == confirm_password:",
    "if (password === '') return;",
    "assert token == 'expected'",
    "password: str",
    "password: string;",
    "def login(user: str, password: bytes) -> bool:",
    "interface Creds { token: String; secret: number }",
    # Prose: the word after "password:" opens a sentence, cut at its apostrophe
    # ("[secret:password]'ll add a ~/.pgpass entry" was shown for an assistant's reply).
    "pg_dump needs a password: I'll add a ~/.pgpass entry",
    "No password: it's read from the keyring",
    "the password: don\u2019t commit it, it\u2019s in the vault",
    # /etc/nsswitch.conf: where user accounts come from
    "passwd: files systemd",
    "passwd:         compat",
    # Upper-case names of keys that are no secret
    "PRIMARY_KEY=id", "SORT_KEY=created_at", "CACHE_KEY=users:v2:list",
    "export RSA_PUBLIC_KEY=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1",
    # CJK words about passwords, not assignments of one
    "密码是什么？忘记密码了", "修改密码：请联系管理员", "パスワードを忘れました",
    "비밀번호를 바꿨어요", "密码：${DB_PASSWORD}",
)
"""Text that holds no secret: it must come out unchanged."""
