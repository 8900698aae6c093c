package io.aqelens.listener;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One finished adaptive SQL execution as AQE Lens' capture format records it (see
 * aqe_core/live/recorder.py, whose py4j walk this is, run in the driver itself): the final plan
 * with per-node details, each query stage's runtime statistics, bytesByPartitionId, the per-map
 * block sizes, and the partition specs of every adaptive read (as Spark prints them; the reader
 * parses them).
 */
final class PlanRecorder {
    static final String[] STAGES = {"ShuffleQueryStage", "BroadcastQueryStage", "TableCacheQueryStage", "ResultQueryStage"};
    static final String[] READS = {"AQEShuffleRead", "CustomShuffleReader"};
    static final String[] JOINS = {"SortMergeJoin", "ShuffledHashJoin", "BroadcastHashJoin", "BroadcastNestedLoopJoin",
        "CartesianProduct"};
    static final String[] NO_DESC = {"WholeStageCodegen", "InputAdapter"};
    static final String[] NO_REQ = {"WholeStageCodegen", "InputAdapter", "AdaptiveSparkPlan", "Exchange",
        "ShuffleQueryStage", "BroadcastQueryStage", "ResultQueryStage", "TableCacheQueryStage", "AQEShuffleRead",
        "CustomShuffleReader", "ReusedExchange", "BroadcastExchange", "ColumnarToRow"};
    static final String[] ROW_WIDTH = {"Project", "Window", "HashAggregate", "ObjectHashAggregate", "SortAggregate"};
    static final String[] DECOMPRESSED_NAMES = {};

    private final int major;
    private final int minor;
    private final long mapSizeCap;
    private final List<Map<String, Object>> infos = new ArrayList<>();
    private final List<String> names = new ArrayList<>();
    private final List<String> descs = new ArrayList<>();
    private final List<Object[]> stageObjs = new ArrayList<>();  // {index, stage}
    private final List<Object[]> readObjs = new ArrayList<>();   // {index, read}
    private final List<Object[]> adaptiveObjs = new ArrayList<>();
    private final Map<Integer, Integer> firstChild = new HashMap<>();
    final List<String> notes = new ArrayList<>();

    private final Object sparkContext;

    PlanRecorder(Object sparkContext, String sparkVersion, long mapSizeCap) {
        this.sparkContext = sparkContext;
        String[] p = sparkVersion.split("[.-]");
        this.major = Integer.parseInt(p[0]);
        this.minor = p.length > 1 ? Integer.parseInt(p[1]) : 0;
        this.mapSizeCap = mapSizeCap;
    }

    private boolean atLeast(int maj, int min) {
        return major > maj || (major == maj && minor >= min);
    }

    /** The query dict (capture format) of an executed {@code QueryExecution}. */
    Map<String, Object> record(Object qe, long executionId, int defaultParallelism) throws Exception {
        long t0 = System.nanoTime();
        Object executed = R.call(qe, "executedPlan");
        Map<String, Object> finalPlan = walk(executed);
        Map<String, Object> q = new LinkedHashMap<>();
        q.put("index", executionId);
        q.put("label", "");
        q.put("preset", null);
        q.put("sql", null);
        boolean adaptive = !adaptiveObjs.isEmpty();
        q.put("adaptive", adaptive);
        List<Object> ids = new ArrayList<>();
        ids.add(executionId);
        q.put("execution_ids", ids);
        q.put("default_parallelism", defaultParallelism);
        q.put("conf", sqlConf(qe, false));
        q.put("duration_ms", null);
        q.put("row_count", null);
        String required = null;
        if (adaptive) {
            Object top = adaptiveObjs.get(0)[1];
            int topIdx = (Integer) adaptiveObjs.get(0)[0];
            if (Boolean.FALSE.equals(infos.get(topIdx).get("is_final"))) {
                notes.add("the adaptive plan is not final: the query did not run to completion");
            }
            required = requiredDistribution(top);
        }
        q.put("required_distribution", required);
        q.put("initial_plan", null);
        q.put("final_plan", finalPlan);
        q.put("plan_updates", new ArrayList<>());
        List<Object> stages = new ArrayList<>();
        List<Object> shuffles = new ArrayList<>();
        List<Object> reads = new ArrayList<>();
        stagesAndReads(stages, shuffles, reads);
        q.put("stages", stages);
        q.put("shuffles", shuffles);
        q.put("reads", reads);
        q.put("spark_stages", new ArrayList<>());
        q.put("notes", notes);
        q.put("capture_ms", (System.nanoTime() - t0) / 1e6);
        return q;
    }

    /** The spark.sql.* settings: explicitly set ones ({@code all=false}), or every defined key's value. */
    static Map<String, Object> sqlConf(Object qe, boolean all) {
        Map<String, Object> out = new TreeMap<>();
        try {
            Object conf = R.call(R.call(R.call(qe, "sparkSession"), "sessionState"), "conf");
            if (all) {
                for (Object t : R.seq(R.call(conf, "getAllDefinedConfs"))) {
                    String k = R.str(R.call(t, "_1"));
                    if (k != null && k.startsWith("spark.sql.")) {
                        out.put(k, R.str(R.call(t, "_2")));
                    }
                }
            }
            for (Object t : R.seq(R.call(conf, "getAllConfs"))) {
                String k = R.str(R.call(t, "_1"));
                if (k != null && k.startsWith("spark.sql.")) {
                    out.put(k, R.str(R.call(t, "_2")));
                }
            }
        } catch (Throwable e) {
            // a session without SQL conf access: the reader applies the release's defaults
        }
        return out;
    }

    private String requiredDistribution(Object adaptive) {
        try {
            Object rd = R.field(adaptive, "requiredDistribution");
            if (rd == null) {
                return null;
            }
            Object v = R.opt(rd);
            return v == null ? "None" : v.toString();
        } catch (Throwable e) {
            return null;
        }
    }

    // -- the plan walk -------------------------------------------------------------------

    private Map<String, Object> walk(Object root) throws Exception {
        Deque<Object[]> stack = new ArrayDeque<>();  // {plan object, parent node map}
        stack.push(new Object[] {root, null});
        Map<String, Object> rootMap = null;
        while (!stack.isEmpty()) {
            Object[] top = stack.pop();
            Object obj = top[0];
            @SuppressWarnings("unchecked")
            Map<String, Object> parent = (Map<String, Object>) top[1];
            int idx = infos.size();
            String name = R.str(R.call(obj, "nodeName"));
            String desc = R.startsWithAny(name, NO_DESC) ? name : simpleString(obj);
            Map<String, Object> node = new LinkedHashMap<>();
            node.put("id", null);
            node.put("name", name);
            node.put("description", desc);
            node.put("metrics", new ArrayList<>());
            node.put("children", new ArrayList<>());
            Map<String, Object> info = new LinkedHashMap<>();
            infos.add(info);
            names.add(name);
            descs.add(desc);
            if (parent == null) {
                rootMap = node;
            } else {
                @SuppressWarnings("unchecked")
                List<Object> kids = (List<Object>) parent.get("children");
                kids.add(node);
            }
            List<Object> kids = children(obj, name, desc);
            if (!kids.isEmpty() && !R.startsWithAny(name, NO_REQ)) {
                Object req = R.tryCall(obj, "requiredChildDistribution");
                if (req != null) {
                    info.put("req_text", req.toString());
                }
            }
            annotate(obj, name, desc, info, idx);
            node.put("info", info);
            if (!kids.isEmpty()) {
                firstChild.put(idx, idx + 1);
            }
            for (int i = kids.size() - 1; i >= 0; i--) {
                stack.push(new Object[] {kids.get(i), node});
            }
        }
        return rootMap;
    }

    private static String simpleString(Object obj) {
        Object s = R.tryCall(obj, "simpleString", 25);
        if (s == null) {
            s = R.tryCall(obj, "simpleString");
        }
        return s == null ? "" : s.toString();
    }

    private List<Object> children(Object obj, String name, String desc) throws Exception {
        List<Object> out = new ArrayList<>();
        if (name.equals("AdaptiveSparkPlan")) {
            Object p = R.tryCall(obj, "executedPlan");
            if (p == null) {
                p = R.field(obj, "currentPhysicalPlan");
            }
            out.add(p);
            return out;
        }
        if (R.in(name, STAGES)) {
            out.add(R.call(obj, "plan"));
            return out;
        }
        out.addAll(R.seq(R.call(obj, "children")));
        String d = desc.toLowerCase();
        if (d.contains("subquery") || d.contains("dynamicpruning")) {
            Object subs = R.tryCall(obj, "subqueries");
            if (subs != null) {
                out.addAll(R.seq(subs));
            }
        }
        return out;
    }

    private void annotate(Object obj, String name, String desc, Map<String, Object> info, int idx) throws Exception {
        if (name.equals("AdaptiveSparkPlan")) {
            adaptiveObjs.add(new Object[] {idx, obj});
            info.put("is_final", desc.contains("isFinalPlan=true"));
            Object sub = R.tryCall(obj, "isSubquery");
            if (sub instanceof Boolean) {
                info.put("is_subquery", sub);
            }
        } else if (R.in(name, STAGES)) {
            Object id = R.tryCall(obj, "id");
            if (id instanceof Number) {
                info.put("stage_id", ((Number) id).intValue());
            }
            if (name.equals("ShuffleQueryStage") || name.equals("BroadcastQueryStage")) {
                stageObjs.add(new Object[] {idx, obj});
            }
        } else if (R.in(name, READS)) {
            readObjs.add(new Object[] {idx, obj});
        } else if (R.startsWithAny(name, JOINS)) {
            info.put("skew", name.contains("skew=true"));
            String[][] keys = {{"join_type", "joinType"}, {"left_keys", "leftKeys"}, {"right_keys", "rightKeys"},
                {"build_side", "buildSide"}};
            for (String[] k : keys) {
                Object v = R.tryCall(obj, k[1]);
                if (v != null) {
                    info.put(k[0], v.toString());
                }
            }
            if (name.startsWith("CartesianProduct")) {
                info.put("join_type", "Cross");
            }
        } else if (name.equals("Exchange")) {
            exchangeInfo(obj, info);
        } else if (R.in(name, ROW_WIDTH)) {
            long[] rows = rowSizes(obj);
            if (rows != null) {
                List<Object> l = new ArrayList<>();
                l.add(rows[0]);
                l.add(rows[1]);
                info.put("row_sizes", l);
            }
        } else if (name.equals("Union")) {
            Object part = R.tryCall(obj, "outputPartitioning");
            if (part != null) {
                info.put("partitioning", part.toString());
            }
        }
    }

    /** EstimationUtils.getSizePerRow of the node's output and of its child's output. */
    private static long[] rowSizes(Object obj) {
        try {
            Class<?> eu = Class.forName("org.apache.spark.sql.catalyst.plans.logical.statsEstimation.EstimationUtils");
            Object empty = eu.getMethod("getSizePerRow$default$2").invoke(null);
            java.lang.reflect.Method m = null;
            for (java.lang.reflect.Method x : eu.getMethods()) {
                if (x.getName().equals("getSizePerRow") && x.getParameterCount() == 2) {
                    m = x;
                }
            }
            Object out = R.call(obj, "output");
            Object in = R.call(R.call(obj, "child"), "output");
            return new long[] {Long.parseLong(m.invoke(null, out, empty).toString()),
                Long.parseLong(m.invoke(null, in, empty).toString())};
        } catch (Throwable e) {
            return null;
        }
    }

    private void exchangeInfo(Object ex, Map<String, Object> info) {
        if (atLeast(3, 1)) {
            Object o = R.tryCall(ex, "shuffleOrigin");
            if (o != null) {
                info.put("origin", o.toString());
            }
        } else {
            Object c = R.tryCall(ex, "canChangeNumPartitions");
            if (c instanceof Boolean) {
                info.put("can_change_num_partitions", c);
            }
        }
        Object part = R.tryCall(ex, "outputPartitioning");
        if (part != null) {
            info.put("partitioning", part.toString());
            Object n = R.tryCall(part, "numPartitions");
            if (n instanceof Number) {
                info.put("num_partitions", ((Number) n).intValue());
            }
        }
        if (atLeast(3, 5)) {
            try {
                Object adv = R.opt(R.call(ex, "advisoryPartitionSize"));
                if (adv != null) {
                    info.put("advisory_partition_size", Long.parseLong(adv.toString()));
                }
            } catch (Throwable e) {
                // no rebalance hint
            }
        }
    }

    // -- statistics ----------------------------------------------------------------------

    private void stagesAndReads(List<Object> stages, List<Object> shuffles, List<Object> reads) throws Exception {
        Map<Integer, Map<String, Object>> stageByNode = new HashMap<>();
        TreeSet<Integer> seen = new TreeSet<>();
        TreeMap<Integer, Object> shuffleById = new TreeMap<>();
        for (Object[] so : stageObjs) {
            int idx = (Integer) so[0];
            Object obj = so[1];
            Map<String, Object> info = infos.get(idx);
            Object shuffle = R.tryCall(obj, "shuffle");
            Map<String, Object> st = new LinkedHashMap<>();
            Object sid = info.get("stage_id");
            st.put("stage_id", sid == null ? -1 : sid);
            st.put("kind", shuffle == null ? "broadcast" : "shuffle");
            st.put("node", idx);
            st.put("shuffle_id", null);
            st.put("origin", null);
            st.put("can_change_num_partitions", null);
            st.put("num_partitions", null);
            st.put("num_maps", null);
            st.put("output_partitioning", null);
            st.put("advisory_partition_size", null);
            st.put("size_in_bytes", null);
            st.put("row_count", null);
            st.put("reused", idx + 1 < names.size() && names.get(idx + 1).equals("ReusedExchange"));
            stageByNode.put(idx, st);
            stages.add(st);
            runtimeStats(obj, st);
            if (shuffle == null) {
                continue;
            }
            exchangeInfo(shuffle, info);
            st.put("origin", info.remove("origin"));
            st.put("can_change_num_partitions", info.remove("can_change_num_partitions"));
            st.put("output_partitioning", info.remove("partitioning"));
            st.put("num_partitions", info.remove("num_partitions"));
            st.put("advisory_partition_size", info.remove("advisory_partition_size"));
            Object ms = null;
            try {
                ms = R.opt(R.call(obj, "mapStats"));
            } catch (Throwable e) {
                ms = null;
            }
            Integer shuffleId = null;
            if (ms != null) {
                shuffleId = ((Number) R.call(ms, "shuffleId")).intValue();
            } else {
                Object dep = R.tryCall(shuffle, "shuffleDependency");
                Object id = dep == null ? null : R.tryCall(dep, "shuffleId");
                shuffleId = id instanceof Number ? ((Number) id).intValue() : null;
            }
            st.put("shuffle_id", shuffleId);
            info.put("shuffle_id", shuffleId);
            st.put("num_maps", numMaps(shuffle));
            if (shuffleId == null || seen.contains(shuffleId)) {
                continue;
            }
            seen.add(shuffleId);
            shuffleById.put(shuffleId, shuffleCapture(shuffleId, ms, st));
        }
        shuffles.addAll(shuffleById.values());
        for (Object[] ro : readObjs) {
            int ridx = (Integer) ro[0];
            Object read = ro[1];
            Integer child = firstChild.get(ridx);
            Map<String, Object> st = child == null ? null : stageByNode.get(child);
            Object specs = R.call(read, "partitionSpecs");
            String name = names.get(ridx);
            String desc = descs.get(ridx);
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("node", ridx);
            r.put("stage_id", st == null ? null : st.get("stage_id"));
            r.put("shuffle_id", st == null ? null : st.get("shuffle_id"));
            r.put("description", desc.startsWith(name) ? desc.substring(name.length()).trim() : desc);
            r.put("specs_text", specs.toString());
            Object n = R.tryCall(specs, "size");
            if (n instanceof Number) {
                r.put("specs_count", ((Number) n).intValue());
            }
            reads.add(r);
            infos.get(ridx).put("read", true);
        }
    }

    private Object numMaps(Object shuffle) {
        try {
            if (atLeast(3, 2)) {
                return ((Number) R.call(shuffle, "numMappers")).intValue();
            }
            return ((Number) R.call(R.call(R.call(shuffle, "shuffleDependency"), "rdd"), "getNumPartitions")).intValue();
        } catch (Throwable e) {
            return null;
        }
    }

    private static void runtimeStats(Object stage, Map<String, Object> st) {
        try {
            Object stats = R.opt(R.call(stage, "computeStats"));
            if (stats == null) {
                return;
            }
            st.put("size_in_bytes", new java.math.BigInteger(R.call(stats, "sizeInBytes").toString()));
            Object rc = R.opt(R.call(stats, "rowCount"));
            if (rc != null) {
                st.put("row_count", new java.math.BigInteger(rc.toString()));
            }
        } catch (Throwable e) {
            // statistics not available: the reader treats the size as unknown
        }
    }

    private Map<String, Object> shuffleCapture(int shuffleId, Object ms, Map<String, Object> st) throws Exception {
        long[] b = ms == null ? null : (long[]) R.call(ms, "bytesByPartitionId");
        Object np = st.get("num_partitions");
        int nRed = b != null ? b.length : (np instanceof Number ? ((Number) np).intValue() : 0);
        Map<String, Object> sc = new LinkedHashMap<>();
        sc.put("shuffle_id", shuffleId);
        sc.put("num_reducers", nRed);
        sc.put("num_maps", st.get("num_maps"));
        sc.put("bytes_by_partition_id", b);
        sc.put("map_sizes", null);
        sc.put("map_sizes_note", null);
        String part = (String) st.get("output_partitioning");
        if (b == null) {
            sc.put("map_sizes_note", "no map statistics: the shuffle's input had 0 partitions");
        } else if (part != null && part.startsWith("SinglePartition")) {
            sc.put("map_sizes_note", "single-partition shuffle: AQE never splits or coalesces it, per-map sizes not recorded");
        } else {
            MapSizes.record(sc, sparkContext, shuffleId, b, mapSizeCap);
        }
        return sc;
    }
}
