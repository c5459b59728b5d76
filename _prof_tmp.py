import cProfile, pstats, time, asyncio
import psycopg
from benchmarks.generate import generate
from benchmarks.scale import QUERY_MIX
from harkback.pipeline.ingest import chunked
from harkback.adapters.stores.postgres import PostgresStore
from harkback.pipeline.facade import Harkback
from harkback.pipeline.compose import Pipeline
from tests.support.postgres_server import running_server

class Timed(psycopg.Cursor):
    def execute(self, query, params=None, **kw):
        t = time.perf_counter()
        r = super().execute(query, params, **kw)
        ms = (time.perf_counter() - t) * 1000
        if ms > 1: print(f"   {ms:7.1f} ms  {str(query)[:110]}")
        return r

for server in running_server():
    url = server.create_database("prof")
    async def go():
        store = PostgresStore.open(url).unwrap()
        for g in chunked(generate(50000, 0), 500):
            (await store.ingest(g)).unwrap()
        (await store.optimize().awaitable()).unwrap()
        store._pool.kwargs["cursor_factory"] = Timed
        store.close()
        store = PostgresStore.open(url).unwrap()
        with store._pool.connection() as c: pass
        hb = Harkback(store=store, pipeline=Pipeline())
        for label, q in QUERY_MIX:
            await hb.search(q)
        import psycopg_pool
        store2 = PostgresStore.open(url).unwrap()
        store2._pool.close()
        store2._pool = psycopg_pool.ConnectionPool(url, kwargs={"cursor_factory": Timed}, min_size=1, max_size=2)
        hb = Harkback(store=store2, pipeline=Pipeline())
        for label, q in QUERY_MIX:
            print(label)
            pr = cProfile.Profile(); pr.enable()
            r = await hb.search(q)
            pr.disable()
            print(label, {k: round(v,1) for k, v in r.timings.items()})
            if label == "question": pstats.Stats(pr).sort_stats("tottime").print_stats(12)
        store.close(); store2.close()
    asyncio.run(go())
