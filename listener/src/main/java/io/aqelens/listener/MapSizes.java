package io.aqelens.listener;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Per-map block sizes ({@code MapStatus.getSizeForBlock}) of a shuffle, read from the driver's
 * MapOutputTrackerMaster: what OptimizeSkewedJoin splits a skewed reducer by. At most
 * {@code cap} sizes are kept (the largest reducers' columns when a shuffle has more), as the
 * capture recorder does.
 */
final class MapSizes {
    private MapSizes() {}

    static void record(Map<String, Object> sc, Object sparkContext, int shuffleId, long[] b, long cap) {
        Object[] statuses;
        try {
            statuses = mapStatuses(sparkContext, shuffleId);
        } catch (Throwable e) {
            sc.put("map_sizes_note", "map statuses not reachable: " + e);
            if (System.getenv("AQE_LENS_LISTENER_DEBUG") != null) {
                e.printStackTrace();
            }
            return;
        }
        if (statuses == null) {
            sc.put("map_sizes_note", "the shuffle's map statuses were already unregistered");
            return;
        }
        int nMaps = statuses.length;
        int nRed = b.length;
        if (sc.get("num_maps") == null) {
            sc.put("num_maps", nMaps);
        }
        Map<String, Object> out = new java.util.LinkedHashMap<>();
        if (nMaps == 0 || nRed == 0) {
            List<Object> rows = new ArrayList<>();
            if (nMaps == 0) {
                for (int r = 0; r < nRed; r++) {
                    rows.add(new long[0]);
                }
            }
            put(out, nMaps, null, new ArrayList<>(), true, rows);
            sc.put("map_sizes", out);
            return;
        }
        int[] wanted;
        List<Object> reducers = null;
        if ((long) nMaps * nRed <= cap) {
            wanted = new int[nRed];
            for (int r = 0; r < nRed; r++) {
                wanted[r] = r;
            }
        } else {
            int k = (int) Math.max(1, cap / nMaps);
            Integer[] order = new Integer[nRed];
            for (int r = 0; r < nRed; r++) {
                order[r] = r;
            }
            Arrays.sort(order, (x, y) -> b[x] != b[y] ? Long.compare(b[y], b[x]) : Integer.compare(x, y));
            Integer[] top = Arrays.copyOf(order, Math.min(k, nRed));
            Arrays.sort(top);
            wanted = new int[top.length];
            reducers = new ArrayList<>();
            for (int i = 0; i < top.length; i++) {
                wanted[i] = top[i];
                reducers.add(top[i]);
            }
            sc.put("map_sizes_note", nMaps + " maps x " + nRed + " reducers exceeds the cap of " + cap
                + " sizes: per-map sizes kept for the " + wanted.length + " largest reducers");
        }
        TreeSet<String> classes = new TreeSet<>();
        long[][] rows = new long[wanted.length][nMaps];
        boolean missing = false;
        for (int m = 0; m < nMaps; m++) {
            Object ms = statuses[m];
            if (ms == null) {
                missing = true;
                for (int k = 0; k < wanted.length; k++) {
                    rows[k][m] = -1;
                }
                continue;
            }
            classes.add(ms.getClass().getSimpleName());
            for (int k = 0; k < wanted.length; k++) {
                try {
                    rows[k][m] = ((Number) R.call(ms, "getSizeForBlock", wanted[k])).longValue();
                } catch (Throwable e) {
                    rows[k][m] = -1;
                }
            }
        }
        boolean consistent = true;
        for (int k = 0; k < wanted.length; k++) {
            long sum = 0;
            boolean hole = false;
            for (long x : rows[k]) {
                if (x < 0) {
                    hole = true;
                }
                sum += x;
            }
            if (!hole && sum != b[wanted[k]]) {
                consistent = false;
            }
        }
        List<Object> rowList = new ArrayList<>();
        Collections.addAll(rowList, (Object[]) rows);
        put(out, nMaps, reducers, new ArrayList<>(classes), consistent, rowList);
        sc.put("map_sizes", out);
        if (missing) {
            sc.put("map_sizes_note", "some map statuses are missing (lost executor?): their sizes are -1");
        }
    }

    private static void put(Map<String, Object> out, int nMaps, List<Object> reducers, List<String> classes,
                            boolean consistent, List<Object> rows) {
        out.put("num_maps", nMaps);
        out.put("reducers", reducers);
        out.put("status_classes", classes);
        out.put("consistent", consistent);
        out.put("sizes_by_reducer", rows);
    }

    /** The MapStatus[] of a registered shuffle, or null once it was unregistered. */
    static Object[] mapStatuses(Object sparkContext, int shuffleId) throws Exception {
        // SparkContext.env, then a field of SparkEnv, never SparkEnv's methods: listing those
        // loads classes the driver may not have (4.x: protobuf types)
        Object env = R.call(sparkContext, "env");
        Object tracker = R.field(env, "mapOutputTracker");
        Object statuses = R.call(tracker, "shuffleStatuses");
        Object got = R.call(statuses, "get", Integer.valueOf(shuffleId));
        Object status = got != null && got.getClass().getName().startsWith("scala.") ? R.opt(got) : got;
        if (status == null) {
            return null;
        }
        return (Object[]) R.field(status, "mapStatuses");
    }
}
