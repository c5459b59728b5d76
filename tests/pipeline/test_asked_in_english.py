"""An English question about a session held in Chinese, in a store shaped like a
developer's own: the answer weeks old, recent English look-alikes sharing the question's
English words (frontend, docker, container), dated relative to the test's clock.

The English question's words have Chinese and Korean names in the glossary (frontend 前端,
bundle 打包): where the store holds those in few messages they are searched too, so the
CJK session is found by them and not only when it happens to write one of the question's
English words (``plan.weigh_units``). An agent asking for its user often writes the
question in English whatever language the sessions were held in.
"""

from __future__ import annotations

import time
from pathlib import Path

import attrs
from returns.unsafe import unsafe_perform_io

from harkback.pipeline import SUMMARIZERS, Harkback, Pipeline, open_store
from tests.support.dated_sessions import Turns, dated

SESSIONS: dict[str, tuple[float, Turns]] = {
    # The answers, weeks old.
    "zh-bundle": (22.0, [
        ("user", "前端打包出来的 main.js 有 3MB，首屏太慢了"),
        ("assistant", "用 rollup-plugin-visualizer 看了一下，lodash 整包和 moment 的 locale 占了"
                      "一大半。改成 lodash-es 按需引入，moment 换成 dayjs，main.js 降到 600KB。")]),
    "ko-docker-net": (40.0, [
        ("user", "도커 컨테이너끼리 통신이 안 돼요. api 에서 db:5432 로 접속하면 could not "
                 "translate host name \"db\" to address"),
        ("assistant", "두 컨테이너가 서로 다른 compose 프로젝트라서 네트워크가 분리되어 있었어요. "
                      "docker network create shop-net 으로 외부 네트워크를 만들었습니다.")]),
    # Recent look-alikes sharing the questions' English words.
    "en-lint": (0.8, [
        ("user", "set up eslint and prettier for the frontend and fix the lint errors"),
        ("assistant", "Added eslint.config.js; fixed 212 lint errors, mostly unused imports.")]),
    "en-vite": (31.0, [
        ("user", "let's move the frontend from webpack to vite, builds take 4 minutes"),
        ("assistant", "Replaced webpack.config.js with vite.config.ts. Build is now 35s.")]),
    "ja-docker-build": (1.1, [
        ("user", "Docker のビルドエラーを直して。pip install が失敗する"),
        ("assistant", "Dockerfile に libpq-dev を追加しました。")]),
    "en-oom": (18.0, [
        ("user", "the reports pod gets OOMKilled, exit code 137"),
        ("assistant", "The JVM ignored the container limit; set MaxRAMPercentage=75.")]),
    "en-cache": (2.0, [
        ("user", "the docker build cache is not used in CI"),
        ("assistant", "Added --cache-from to the build step.")]),
    # The rest of a week or two of work, on other things.
    **{f"other-{i}": (0.5 + i * 1.3, [("user", ask), ("assistant", did)]) for i, (ask, did) in
       enumerate([
           ("rename master to main", "ran git branch -m master main and updated ci.yml"),
           ("the stripe webhooks fail signature checks", "pass the raw body to construct_event"),
           ("add rate limiting to the public api", "a token bucket in redis with a lua script"),
           ("kafka consumer lag keeps growing", "lowered max.poll.records to 50"),
           ("terraform says the state is locked", "ran terraform force-unlock"),
           ("the test suite takes 14 minutes", "session-scoped db fixture and pytest-xdist"),
           ("gpg failed to sign the data", "export GPG_TTY in zshrc"),
           ("sentry floods slack with alerts", "a fingerprint rule and one alert an hour"),
           ("presigned s3 links fail in europe", "sign with the regional endpoint"),
           ("redis 连接超时", "调大 max_connections 和 socket_timeout"),
       ])},
}


async def test_an_english_question_finds_the_chinese_session_by_its_own_words(
        tmp_path: Path) -> None:
    """The Chinese session writes none of the question's English words: it was not found
    at all, the two English sessions saying "frontend" came back in its place."""
    with open_store(tmp_path / "history.db").unwrap() as store:
        unsafe_perform_io((await store.ingest(dated(SESSIONS, time.time())).awaitable()).unwrap())
        pipeline = attrs.evolve(Pipeline(), summarize=SUMMARIZERS["none"])
        payload = (await Harkback(store=store, pipeline=pipeline).search(
            "how did we shrink the frontend bundle")).to_payload()
    assert payload["success"], payload
    assert [r["session_id"] for r in payload["results"]][:1] == ["zh-bundle"]
