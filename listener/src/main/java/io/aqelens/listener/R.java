package io.aqelens.listener;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Reflection helpers. Every Scala-typed API (Seq, Option, BigInt, plan nodes, query stages) is
 * called by name, so one jar links on the Scala 2.12 and 2.13 builds of Spark 3.0.1 - 4.3.
 */
final class R {
    private static final ConcurrentHashMap<String, Method> METHODS = new ConcurrentHashMap<>();
    private static final ConcurrentHashMap<String, Field> FIELDS = new ConcurrentHashMap<>();

    private R() {}

    /** A public method of {@code o} by name and argument count, invoked. */
    static Object call(Object o, String name, Object... args) throws Exception {
        Class<?> c = o.getClass();
        String key = c.getName() + "#" + name + "/" + args.length;
        Method m = METHODS.get(key);
        if (m == null) {
            for (Method x : c.getMethods()) {
                if (x.getName().equals(name) && x.getParameterCount() == args.length) {
                    m = x;
                    break;
                }
            }
            if (m == null) {
                throw new NoSuchMethodException(c.getName() + "." + name);
            }
            m.setAccessible(true);
            METHODS.put(key, m);
        }
        return m.invoke(o, args);
    }

    /** {@link #call} or null when the method is missing or throws. */
    static Object tryCall(Object o, String name, Object... args) {
        try {
            return call(o, name, args);
        } catch (Throwable t) {
            return null;
        }
    }

    /** A (possibly private) field declared by {@code o}'s class or a superclass. */
    static Object field(Object o, String name) throws Exception {
        Class<?> c = o.getClass();
        String key = c.getName() + "." + name;
        Field f = FIELDS.get(key);
        if (f == null) {
            for (Class<?> k = c; k != null && f == null; k = k.getSuperclass()) {
                for (Field x : k.getDeclaredFields()) {
                    if (x.getName().equals(name) || x.getName().endsWith("$$" + name)) {
                        f = x;
                        break;
                    }
                }
            }
            if (f == null) {
                throw new NoSuchFieldException(c.getName() + "." + name);
            }
            f.setAccessible(true);
            FIELDS.put(key, f);
        }
        return f.get(o);
    }

    /** A Scala collection (or a Java array / Iterable) as a list. */
    static List<Object> seq(Object s) throws Exception {
        List<Object> out = new ArrayList<>();
        if (s == null) {
            return out;
        }
        if (s.getClass().isArray()) {
            int n = java.lang.reflect.Array.getLength(s);
            for (int i = 0; i < n; i++) {
                out.add(java.lang.reflect.Array.get(s, i));
            }
            return out;
        }
        if (s instanceof Iterable) {
            for (Object x : (Iterable<?>) s) {
                out.add(x);
            }
            return out;
        }
        Object it = call(s, "iterator");
        while ((Boolean) call(it, "hasNext")) {
            out.add(call(it, "next"));
        }
        return out;
    }

    /** A Scala Option's value, or null for None. */
    static Object opt(Object o) throws Exception {
        if (o == null) {
            return null;
        }
        return (Boolean) call(o, "isDefined") ? call(o, "get") : null;
    }

    static String str(Object o) {
        return o == null ? null : o.toString();
    }

    static boolean startsWithAny(String s, String[] prefixes) {
        for (String p : prefixes) {
            if (s.startsWith(p)) {
                return true;
            }
        }
        return false;
    }

    static boolean in(String s, String[] names) {
        for (String p : names) {
            if (s.equals(p)) {
                return true;
            }
        }
        return false;
    }
}
